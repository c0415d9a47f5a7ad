package scripting

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Go values crossing into unstructured form go through JSON, the format client-go's
// unstructured package is defined by: integral numbers become int64, others float64.

// decodeJSON decodes b into map[string]any, []any, string, int64, float64, bool or nil.
func decodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("decode json: %w", err)
	}
	return fromNumbers(v), nil
}

func fromNumbers(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			v[k] = fromNumbers(x)
		}
	case []any:
		for i, x := range v {
			v[i] = fromNumbers(x)
		}
	case json.Number:
		return numberValue(v)
	}
	return v
}

func numberValue(n json.Number) any {
	if i, err := n.Int64(); err == nil {
		return i
	}
	f, _ := n.Float64()
	return f
}

// normalize converts a hand-built Go value (typed slices, maps, structs) to unstructured form.
// Values JSON cannot represent become their fmt representation rather than failing a handler.
func normalize(x any) any {
	b, err := json.Marshal(x)
	if err != nil {
		return fmt.Sprint(x)
	}
	v, err := decodeJSON(b)
	if err != nil {
		return fmt.Sprint(x)
	}
	return v
}
