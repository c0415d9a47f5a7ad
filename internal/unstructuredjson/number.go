package unstructuredjson

import (
	"strconv"
)

// number decodes the number at the position: an int64 when it is an integer literal that
// fits, a float64 otherwise, as sigs.k8s.io/json's PreserveInts does.
func (d *decoder) number() (any, error) {
	lit, integer, err := d.scanNumber()
	if err != nil {
		return nil, err
	}
	d.vhash, d.vshared = hashBytes(lit)^hashNum, true
	return convertNumber(lit, integer)
}

// convertNumber converts a validated number literal.
func convertNumber(lit []byte, integer bool) (any, error) {
	if integer {
		if len(lit) <= 18 { // fits int64 whatever the digits
			return smallInt(lit), nil
		}
		if i, err := strconv.ParseInt(string(lit), 10, 64); err == nil {
			return i, nil
		}
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil {
		return nil, err // out of float64 range: an error in encoding/json too
	}
	return f, nil
}

// smallInt converts a validated integer literal of at most 18 bytes.
func smallInt(lit []byte) int64 {
	neg := lit[0] == '-'
	if neg {
		lit = lit[1:]
	}
	var n int64
	for _, c := range lit {
		n = n*10 + int64(c-'0')
	}
	if neg {
		return -n
	}
	return n
}

// scanNumber validates the number at the position against JSON's grammar, moves past it
// and returns its literal and whether it is an integer literal (no fraction, no exponent).
func (d *decoder) scanNumber() (lit []byte, integer bool, err error) {
	data, start := d.data, d.pos
	i := start
	if i < len(data) && data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case i < len(data) && data[i] >= '1' && data[i] <= '9':
		i = digits(data, i)
	default:
		d.pos = i
		return nil, false, d.syntaxError("a digit")
	}
	integer = true
	if i < len(data) && data[i] == '.' {
		integer = false
		if i++; i >= len(data) || !isDigit(data[i]) {
			d.pos = i
			return nil, false, d.syntaxError("a digit after '.'")
		}
		i = digits(data, i)
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		integer = false
		if i++; i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= len(data) || !isDigit(data[i]) {
			d.pos = i
			return nil, false, d.syntaxError("a digit in the exponent")
		}
		i = digits(data, i)
	}
	d.pos = i
	return data[start:i], integer, nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func digits(data []byte, i int) int {
	for i < len(data) && isDigit(data[i]) {
		i++
	}
	return i
}
