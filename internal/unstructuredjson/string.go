package unstructuredjson

import (
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// plainByte marks the bytes a string can hold that need no further look: printable ASCII
// other than '"' and '\\'.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// stringKind says what scanString found in a string's content.
type stringKind uint8

const (
	asciiOnly stringKind = iota // printable ASCII: the bytes are the string
	utf8Bytes                   // no escapes, some bytes >= 0x80: the bytes if valid UTF-8
	escaped                     // escapes: unquote needed
)

// scanString validates the string starting at the position (a '"') as encoding/json's
// scanner does, moves past it, and returns its content and what it holds.
func (d *decoder) scanString() ([]byte, stringKind, error) {
	data, i := d.data, d.pos+1
	kind := asciiOnly
	for i < len(data) {
		c := data[i]
		if plainByte[c] {
			i++
			continue
		}
		switch {
		case c == '"':
			content := data[d.pos+1 : i]
			d.pos = i + 1
			return content, kind, nil
		case c == '\\':
			n, err := escapeLen(data[i:])
			if err != nil {
				d.pos = i
				return nil, 0, err
			}
			i += n
			kind = escaped
		case c < 0x20:
			d.pos = i
			return nil, 0, d.syntaxError("no control character in string")
		default: // >= 0x80
			if kind == asciiOnly {
				kind = utf8Bytes
			}
			i++
		}
	}
	d.pos = i
	return nil, 0, d.syntaxError("'\"' closing the string")
}

// escapeLen validates the escape sequence at the start of b (a '\\') and returns its length.
func escapeLen(b []byte) (int, error) {
	if len(b) < 2 {
		return 0, errBadEscape
	}
	switch b[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2, nil
	case 'u':
		if len(b) < 6 || hex4(b[2:6]) < 0 {
			return 0, errBadEscape
		}
		return 6, nil
	}
	return 0, errBadEscape
}

var errBadEscape = syntaxErr("decode json: invalid escape in string")

type syntaxErr string

func (e syntaxErr) Error() string { return string(e) }

// hex4 parses four hexadecimal digits, or returns -1.
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// str decodes the string at the position.
func (d *decoder) str() (string, error) {
	content, kind, err := d.scanString()
	if err != nil {
		return "", err
	}
	if kind == asciiOnly || (kind == utf8Bytes && utf8.Valid(content)) {
		return string(content), nil
	}
	d.buf = unquote(d.buf[:0], content)
	return string(d.buf), nil
}

// strValue decodes the string at the position as a boxed value, from the value cache.
func (d *decoder) strValue() (any, error) {
	content, kind, err := d.scanString()
	if err != nil {
		return nil, err
	}
	d.vshared = true
	if kind == asciiOnly || (kind == utf8Bytes && utf8.Valid(content)) {
		d.vhash = hashBytes(content)
		return d.values.value(content, d.vhash), nil
	}
	d.buf = unquote(d.buf[:0], content)
	d.vhash = hashBytes(d.buf)
	return string(d.buf), nil
}

// unquote appends the decoded content of a validated string to b the way encoding/json's
// unquoteBytes does: escapes resolved, a valid surrogate pair joined, an unpaired surrogate
// and every byte of invalid UTF-8 replaced by U+FFFD.
func unquote(b, s []byte) []byte {
	for r := 0; r < len(s); {
		c := s[r]
		switch {
		case c == '\\' && s[r+1] == 'u':
			rr := hex4(s[r+2:])
			r += 6
			if utf16.IsSurrogate(rr) {
				if r+6 <= len(s) && s[r] == '\\' && s[r+1] == 'u' {
					if dec := utf16.DecodeRune(rr, hex4(s[r+2:])); dec != unicode.ReplacementChar {
						b = utf8.AppendRune(b, dec)
						r += 6
						continue
					}
				}
				rr = unicode.ReplacementChar
			}
			b = utf8.AppendRune(b, rr)
		case c == '\\':
			b = append(b, unescape(s[r+1]))
			r += 2
		case c < utf8.RuneSelf:
			b = append(b, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			b = utf8.AppendRune(b, rr)
			r += size
		}
	}
	return b
}

// unescape maps the letter of a one-letter escape to its byte.
func unescape(c byte) byte {
	switch c {
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	}
	return c // '"', '\\', '/'
}
