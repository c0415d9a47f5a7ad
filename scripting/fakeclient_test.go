package scripting

import (
	"context"
	"sync"
)

// fakeClient records calls and answers with fn when set, else echoes its input.
type fakeClient struct {
	mu    sync.Mutex
	calls []fakeCall
	fn    func(ctx context.Context, c fakeCall) (Object, error)
}

type fakeCall struct {
	Method, Resource, Namespace, Name string
	Obj                               Object
	Patch                             string
	List                              ListOptions
	PatchOpts                         PatchOptions
	Delete                            DeleteOptions
	EventType, Reason, Message        string
}

func (f *fakeClient) do(ctx context.Context, c fakeCall) (Object, error) {
	f.mu.Lock()
	f.calls = append(f.calls, c)
	f.mu.Unlock()
	if f.fn != nil {
		return f.fn(ctx, c)
	}
	if c.Obj != nil {
		return c.Obj, nil
	}
	return Object{"metadata": map[string]any{"name": c.Name, "namespace": c.Namespace}}, nil
}

func (f *fakeClient) recorded() []fakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeCall(nil), f.calls...)
}

func (f *fakeClient) Get(ctx context.Context, resource, namespace, name string) (Object, error) {
	return f.do(ctx, fakeCall{Method: "Get", Resource: resource, Namespace: namespace, Name: name})
}

func (f *fakeClient) List(ctx context.Context, resource string, opts ListOptions) ([]Object, error) {
	obj, err := f.do(ctx, fakeCall{Method: "List", Resource: resource, List: opts})
	if err != nil {
		return nil, err
	}
	return []Object{obj, obj}, nil
}

func (f *fakeClient) Create(ctx context.Context, resource string, obj Object) (Object, error) {
	return f.do(ctx, fakeCall{Method: "Create", Resource: resource, Obj: obj})
}

func (f *fakeClient) Update(ctx context.Context, resource string, obj Object) (Object, error) {
	return f.do(ctx, fakeCall{Method: "Update", Resource: resource, Obj: obj})
}

func (f *fakeClient) UpdateStatus(ctx context.Context, resource string, obj Object) (Object, error) {
	return f.do(ctx, fakeCall{Method: "UpdateStatus", Resource: resource, Obj: obj})
}

func (f *fakeClient) Patch(ctx context.Context, resource, namespace, name string, patch []byte, opts PatchOptions) (Object, error) {
	return f.do(ctx, fakeCall{Method: "Patch", Resource: resource, Namespace: namespace, Name: name,
		Patch: string(patch), PatchOpts: opts})
}

func (f *fakeClient) PatchStatus(ctx context.Context, resource, namespace, name string, patch []byte, opts PatchOptions) (Object, error) {
	return f.do(ctx, fakeCall{Method: "PatchStatus", Resource: resource, Namespace: namespace, Name: name,
		Patch: string(patch), PatchOpts: opts})
}

func (f *fakeClient) Delete(ctx context.Context, resource, namespace, name string, opts DeleteOptions) error {
	_, err := f.do(ctx, fakeCall{Method: "Delete", Resource: resource, Namespace: namespace, Name: name, Delete: opts})
	return err
}

func (f *fakeClient) Event(ctx context.Context, obj Object, eventType, reason, message string) error {
	_, err := f.do(ctx, fakeCall{Method: "Event", Obj: obj, EventType: eventType, Reason: reason, Message: message})
	return err
}
