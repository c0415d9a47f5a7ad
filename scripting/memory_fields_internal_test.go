package scripting

import (
	"reflect"
	"strings"
	"testing"

	"github.com/dop251/goja"
)

// The memory walk (memory.go) names goja's private fields: it leaves out the ones
// Runtime.Interrupt writes from another goroutine (vm.interruptVal, interruptLock,
// interrupted), since reading them during a walk would race. A goja upgrade that renames them,
// or adds another field Interrupt writes, would make the walk race silently. This test pins
// goja's vm as the walk knows it: when it fails, read goja's (*vm).Interrupt again, update
// skipInterruptFields, then this list.
func TestGojaFieldsTheWalkNamesExist(t *testing.T) {
	t.Parallel()
	rtField, ok := reflect.TypeFor[goja.Runtime]().FieldByName("vm")
	if !ok || rtField.Type.Kind() != reflect.Pointer {
		t.Fatal("goja.Runtime has no vm pointer field any more: review the memory walk")
	}
	vm := rtField.Type.Elem()
	if vm.PkgPath() != "github.com/dop251/goja" || vm.Name() != "vm" {
		t.Fatalf("goja.Runtime.vm is a %s.%s, want goja's vm", vm.PkgPath(), vm.Name())
	}
	for _, name := range []string{"interruptVal", "interruptLock", "interrupted"} {
		f, ok := vm.FieldByName(name)
		if !ok {
			t.Errorf("goja's vm has no field %s: the walk would read what Interrupt writes", name)
			continue
		}
		if !skipInterruptFields(vm, f) {
			t.Errorf("the walk does not skip vm.%s", name)
		}
	}
	var got []string
	for i := range vm.NumField() {
		f := vm.Field(i)
		got = append(got, f.Name+" "+f.Type.String())
	}
	want := []string{
		"r *goja.Runtime", "prg *goja.Program", "pc int", "stack goja.valueStack",
		"sp int", "sb int", "args int", "stash *goja.stash", "privEnv *goja.privateEnv",
		"callStack []goja.context", "iterStack []goja.iterStackItem", "refStack []goja.ref",
		"tryStack []goja.tryFrame", "newTarget goja.Value", "result goja.Value",
		"maxCallStackSize int", "stashAllocs int",
		"interrupted uint32", "interruptVal interface {}", "interruptLock sync.Mutex",
		"curAsyncRunner *goja.asyncRunner", "profTracker *goja.profTracker",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("goja's vm fields changed; review skipInterruptFields against (*vm).Interrupt.\ngot:\n%s\nwant:\n%s",
			strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
