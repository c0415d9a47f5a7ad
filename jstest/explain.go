package jstest

import (
	"strings"

	"github.com/dop251/goja"

	"github.com/jsinformer/jsinformer/internal/debugtext"
)

// explain is h.explain(resource, "namespace/name"): what `runner explain` shows of the object,
// as an object (the debug API's JSON) whose toString() is the text, so a failing test can print
// `${h.explain("cm", "ns/x")}`.
func (h *harness) explain(resource, key string) goja.Value {
	x, err := h.off.Explain(h.f.ctx, resource, key, 0)
	if err != nil {
		h.f.throw(err)
	}
	var text strings.Builder
	debugtext.Explanation(&text, x)
	v := h.f.toJS(x)
	if obj, ok := v.(*goja.Object); ok {
		s := text.String()
		_ = obj.Set("text", s)
		_ = obj.Set("toString", func() string { return s })
	}
	return v
}
