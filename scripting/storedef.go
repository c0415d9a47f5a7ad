package scripting

import (
	"fmt"
	"strings"

	"github.com/dop251/goja"
	"k8s.io/apimachinery/pkg/util/validation"
)

// StoreSpec is the definition's `store` declaration: what the script's ctx.store may reach
// beyond its own keys, and which keys' values may be shown.
//
// Shared names the shared namespaces the script uses with ctx.store.shared(name): a shared
// namespace is one store for every script declaring it, so two scripts share keys only when
// both declare the same name, and a script can never reach a store it did not declare.
//
// Readable lists key prefixes whose values the runner may show: traces, explain, the debug
// page and `runner store show`. Other values are shown only by their size. A prefix applies
// to the script's own keys and to those it writes in its shared namespaces; "" makes every key
// readable.
type StoreSpec struct {
	Shared   []string // sorted, unique; each a DNS label
	Readable []string // sorted, unique
}

// IsReadable reports whether key's value may be shown.
func (s StoreSpec) IsReadable(key string) bool {
	for _, p := range s.Readable {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

var storeSpecKeys = []string{"shared", "readable"}

// maxShared bounds the shared namespaces one script may declare.
const maxShared = 16

// readStoreSpec reads the `store` declaration into s.def.Store.
func (s *instance) readStoreSpec(v goja.Value, l locator) error {
	if isMissing(v) {
		return nil
	}
	obj, ok := v.(*goja.Object)
	if !ok || obj.ClassName() == "Array" || isFunction(obj) {
		return invalidf(l.file, l.line("store"), "'store' must be an object {shared, readable}, got "+typeName(v))
	}
	if err := l.checkKeys(obj, "store", storeSpecKeys); err != nil {
		return err
	}
	shared, err := readStrings(obj.Get("shared"), "store.shared", l)
	if err != nil {
		return err
	}
	if len(shared) > maxShared {
		return invalidf(l.file, l.line("shared"), fmt.Sprintf("'store.shared' names more than %d namespaces", maxShared))
	}
	for _, name := range shared {
		if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
			return invalidf(l.file, l.line("shared"), fmt.Sprintf("'store.shared': %q is not a valid name: %s", name, strings.Join(errs, "; ")))
		}
	}
	readable, err := readStrings(obj.Get("readable"), "store.readable", l)
	if err != nil {
		return err
	}
	s.def.Store = StoreSpec{Shared: shared, Readable: readable}
	return nil
}
