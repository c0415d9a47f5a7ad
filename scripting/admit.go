package scripting

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dop251/goja"
)

// Admission calls: validate(obj, ctx) and mutate(obj, ctx), run like any handler (one at a
// time on the Script's runtime, under its deadline) but with no side effects (effects.go)
// and with the admission ctx (admitctx.go).

// AdmissionRequest is the Go side of an admission call's arguments: the request's objects
// and what ctx shows of it. Objects are read-only views to the script, as everywhere.
type AdmissionRequest struct {
	Operation   string // CREATE, UPDATE, DELETE or CONNECT
	Object      Object // nil on DELETE
	OldObject   Object // set on UPDATE and DELETE
	UserInfo    Object // username, uid, groups, extra, as in the AdmissionReview
	DryRun      bool
	SubResource string
	Resource    string // canonical, as ctx.resource: "apps/v1/deployments"
	Namespace   string
	Name        string
	Cache       Cache // the script's cache and indexes; may be nil
	// Deadline is when the request's answer is due (zero: none): the call is not started
	// after it and is interrupted at it when that comes before the runtime's Timeout.
	Deadline time.Time
}

// Validation is what validate returned: undefined allows, {allowed, message?, code?,
// warnings?} decides. Code is 0 unless the script gave one.
type Validation struct {
	Allowed  bool
	Message  string
	Code     int
	Warnings []string
}

// The bounds of what validate may return, so a decision fits a response the API server
// passes on to its client.
const (
	maxWarnings      = 32
	maxVerdictString = 4096
)

var validationKeys = []string{"allowed", "message", "code", "warnings"}

// Validate calls the script's validate(obj, ctx). A script without validate allows.
func (s *Script) Validate(req AdmissionRequest) (Validation, error) {
	if !s.def.Validate {
		return Validation{Allowed: true}, s.noop("validate")
	}
	var res Validation
	err := s.run("validate", func(in *instance) error {
		return in.admit("validate", in.validateFn, req, func(v goja.Value) (err error) {
			res, err = in.validation(v)
			return err
		})
	})
	if err != nil {
		return Validation{}, err // res may still be written by an abandoned call
	}
	return res, nil
}

// Mutate calls the script's mutate(obj, ctx) and returns the object it returned, decoded
// from its JSON form, or nil when it returned undefined or null (no change). A script
// without mutate changes nothing.
func (s *Script) Mutate(req AdmissionRequest) (Object, error) {
	if !s.def.Mutate {
		return nil, s.noop("mutate")
	}
	var out Object
	err := s.run("mutate", func(in *instance) error {
		return in.admit("mutate", in.mutateFn, req, func(v goja.Value) (err error) {
			out, err = in.mutation(v)
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// admit calls fn(obj, ctx) for req with side effects refused and has read read its result,
// both under the call deadline: reading the result may run script code (getters, toJSON).
// The end of the call recovers what read throws.
func (s *instance) admit(name string, fn goja.Callable, req AdmissionRequest, read func(goja.Value) error) (err error) {
	if err := s.beginBy(name, req.Deadline); err != nil {
		return err
	}
	defer s.end(&err)
	s.pure = name
	s.resultLine = s.validateLine
	if name == "mutate" {
		s.resultLine = s.mutateLine
	}
	ctx := s.admitCtx()
	ctx.req, ctx.ev = req, Event{Resource: req.Resource, Cache: req.Cache}
	defer ctx.clear()
	obj := goja.Null()
	if req.Object != nil {
		obj = s.view(req.Object)
	}
	v, err := s.call(s.defObj, fn, obj, ctx.obj)
	if err != nil {
		return withDeleteHint(req, err)
	}
	return read(v)
}

// validation reads validate's result.
func (s *instance) validation(v goja.Value) (Validation, error) {
	if isMissing(v) {
		return Validation{Allowed: true}, nil
	}
	obj, ok := v.(*goja.Object)
	if !ok || obj.ClassName() == "Array" || isFunction(obj) {
		return Validation{}, s.resultError("must return undefined or {allowed, message?, code?, warnings?}; got %s", typeName(v))
	}
	if err := s.checkResultKeys(obj, validationKeys); err != nil {
		return Validation{}, err
	}
	allowed := obj.Get("allowed")
	if allowed == nil || allowed.ExportType() == nil || allowed.ExportType().Kind().String() != "bool" {
		return Validation{}, s.resultError("must return {allowed: true|false, ...}; allowed is %s", typeName(allowed))
	}
	res := Validation{Allowed: allowed.ToBoolean()}
	var err error
	if res.Message, err = s.resultString(obj.Get("message"), "message"); err != nil {
		return Validation{}, err
	}
	if res.Code, err = s.resultCode(obj.Get("code")); err != nil {
		return Validation{}, err
	}
	res.Warnings, err = s.resultWarnings(obj.Get("warnings"))
	return res, err
}

// checkResultKeys refuses a result with keys outside valid, naming every one of them (with
// the valid key each may have meant).
func (s *instance) checkResultKeys(obj *goja.Object, valid []string) error {
	var unknown []string
	for _, k := range obj.Keys() {
		if slices.Contains(valid, k) {
			continue
		}
		if len(unknown) == maxNamedKeys {
			unknown = append(unknown, "…")
			break
		}
		name := fmt.Sprintf("'%s'", truncate(k, maxNamedKeyLength))
		if c := closest(k, valid); c != "" {
			name += fmt.Sprintf(" (did you mean '%s'?)", c)
		}
		unknown = append(unknown, name)
	}
	switch len(unknown) {
	case 0:
		return nil
	case 1:
		return s.resultError("returned an object with the unknown key %s; valid keys are %s", unknown[0], strings.Join(valid, ", "))
	}
	return s.resultError("returned an object with the unknown keys %s; valid keys are %s", strings.Join(unknown, ", "), strings.Join(valid, ", "))
}

// An error names at most maxNamedKeys unknown keys of a result, each cut to maxNamedKeyLength
// bytes: the message reaches the client through the API server.
const (
	maxNamedKeys      = 16
	maxNamedKeyLength = 64
)

func (s *instance) resultString(v goja.Value, key string) (string, error) {
	if isMissing(v) {
		return "", nil
	}
	if !isString(v) {
		return "", s.resultError("returned a %s that is %s, not a string", key, typeName(v))
	}
	return truncate(v.String(), maxVerdictString), nil
}

// resultCode reads code: an HTTP status for a denial, 400 to 599.
func (s *instance) resultCode(v goja.Value) (int, error) {
	if isMissing(v) {
		return 0, nil
	}
	n, ok := intValue(v)
	if !ok || n < 400 || n > 599 {
		return 0, s.resultError("returned a code that is %s; it must be an HTTP status from 400 to 599", typeName(v))
	}
	return int(n), nil
}

func (s *instance) resultWarnings(v goja.Value) ([]string, error) {
	if isMissing(v) {
		return nil, nil
	}
	obj, ok := v.(*goja.Object)
	if !ok || obj.ClassName() != "Array" {
		return nil, s.resultError("returned warnings that are %s, not an array of strings", typeName(v))
	}
	n := obj.Get("length").ToInteger()
	if n > maxWarnings {
		return nil, s.resultError("returned %d warnings (the limit is %d)", n, maxWarnings)
	}
	out := make([]string, 0, n)
	for i := range int(n) {
		el := obj.Get(strconv.Itoa(i))
		if !isString(el) {
			return nil, s.resultError("returned a warning %d that is %s, not a string", i, typeName(el))
		}
		out = append(out, truncate(el.String(), maxVerdictString))
	}
	return out, nil
}

// mutation reads mutate's result: its JSON form, within the limits of one value, decoded.
// A value too large or a toJSON that throws panics as in a binding; admit's end recovers it.
func (s *instance) mutation(v goja.Value) (Object, error) {
	if isMissing(v) {
		return nil, nil
	}
	obj, ok := v.(*goja.Object)
	if !ok || obj.ClassName() == "Array" || isFunction(obj) {
		return nil, s.resultError("must return the changed object (a util.clone of obj) or undefined; got %s", typeName(v))
	}
	j := s.stringify("mutate result", v, goja.Undefined(), goja.Undefined())
	x, derr := decodeJSON([]byte(j.String()))
	m, ok := x.(map[string]any)
	if derr != nil || !ok {
		return nil, s.resultError("returned a value with no JSON object form")
	}
	return m, nil
}
