package scripting

import (
	"encoding/json"
	"fmt"
	"strings"
)

// shiftMap adapts esbuild's source map to the wrapped code and to goja, which looks positions
// up with 1-based columns and reports the map's columns as they are, while source maps count
// columns from 0. After the shift, goja's own positions (in ScriptError and in e.stack) are
// 1-based like its unmapped ones:
//   - every mapping moves down one generated line, for the wrapper's first line;
//   - every generated column moves right by one (unshifted, a position would resolve to the
//     segment after the right one);
//   - every original column moves right by one.
//
// Mappings are deltas, so each shift changes one value: a line's first generated column, and
// the file's first original column.
func shiftMap(srcMap []byte) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(srcMap, &m); err != nil {
		return nil, fmt.Errorf("read source map: %w", err)
	}
	mappings, _ := m["mappings"].(string)
	lines := strings.Split(mappings, ";")
	sourceShifted := false
	for i, line := range lines {
		if line == "" {
			continue
		}
		segs := strings.Split(line, ",")
		for j, seg := range segs {
			fields, err := decodeSegment(seg)
			if err != nil {
				return nil, fmt.Errorf("read source map: %w", err)
			}
			if j > 0 && (sourceShifted || len(fields) < 4) {
				continue // nothing to change: keep the segment's text
			}
			if j == 0 {
				fields[0]++
			}
			if !sourceShifted && len(fields) >= 4 {
				fields[3]++
				sourceShifted = true
			}
			segs[j] = encodeSegment(fields)
		}
		lines[i] = strings.Join(segs, ",")
	}
	m["mappings"] = ";" + strings.Join(lines, ";")
	return json.Marshal(m)
}

const base64Digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

// decodeSegment decodes the base64 VLQ fields of one mapping segment.
func decodeSegment(s string) ([]int, error) {
	var fields []int
	var v, shift int
	for i := 0; i < len(s); i++ {
		d := strings.IndexByte(base64Digits, s[i])
		if d < 0 {
			return nil, fmt.Errorf("invalid VLQ digit %q", s[i])
		}
		v |= (d & 31) << shift
		shift += 5
		if d&32 != 0 {
			continue
		}
		if v&1 == 1 {
			fields = append(fields, -(v >> 1))
		} else {
			fields = append(fields, v>>1)
		}
		v, shift = 0, 0
	}
	if shift != 0 || len(fields) == 0 {
		return nil, fmt.Errorf("truncated VLQ segment %q", s)
	}
	return fields, nil
}

func encodeSegment(fields []int) string {
	var b strings.Builder
	for _, n := range fields {
		v := n << 1
		if n < 0 {
			v = (-n << 1) | 1
		}
		for {
			d := v & 31
			v >>= 5
			if v > 0 {
				d |= 32
			}
			b.WriteByte(base64Digits[d])
			if v == 0 {
				break
			}
		}
	}
	return b.String()
}
