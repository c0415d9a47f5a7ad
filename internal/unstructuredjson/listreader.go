package unstructuredjson

import (
	"errors"
	"io"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// readBufferSize is ReadList's initial buffer: several items of a typical list. It grows
// only to hold a single value (an item, a member) larger than it.
const readBufferSize = 64 << 10

// ReadList decodes a list document from r as List decodes it, item by item as the bytes
// arrive, without holding the whole document: only the value being decoded and what has
// been read past it are in memory, next to the decoded items. ReadList succeeds exactly
// when List would on the same bytes, with an equal list, having read r to its end.
//
// An error is the reader's (unexpected EOF included) or List's verdict on the bytes read so
// far: invalid JSON, or ErrUnusual. Either way the document is consumed, so a caller that
// wants the reference decoder's verdict must read it again.
func ReadList(r io.Reader, opts Options) (*unstructured.UnstructuredList, error) {
	d := getDecoder(nil, opts.DropManagedFields)
	d.keep = opts.Keep
	defer d.put()
	s := &listReader{r: r, d: d, buf: make([]byte, 0, readBufferSize)}
	m, err := s.document()
	if err != nil {
		return nil, err
	}
	return d.listOf(m)
}

// listReader feeds a decoder from a reader: d.data is buf's unconsumed part, d.pos the
// position in it. Values are decoded by the decoder's own functions once the buffer holds
// them whole, so the results and errors are List's.
type listReader struct {
	r    io.Reader
	d    *decoder
	buf  []byte
	mark int   // the first byte to keep when reading more; -1: the position's
	eof  bool  // r has nothing more
	err  error // r's error other than io.EOF
}

// more reads once into the free end of the buffer. When little is free it first drops
// what is consumed (before the mark, or the position), moving the position and the mark,
// and doubles the buffer when what is kept still fills most of it: each byte is moved a
// bounded number of times, however large a value is and however the reads are cut.
func (s *listReader) more() error {
	if s.eof {
		if s.err != nil {
			return s.err
		}
		return io.ErrUnexpectedEOF
	}
	if size := cap(s.buf); size-len(s.buf) < size/4 {
		keep := s.d.pos
		if s.mark >= 0 {
			keep = s.mark
			s.mark = 0
		}
		n := copy(s.buf[:size], s.buf[keep:])
		s.buf, s.d.pos = s.buf[:n], s.d.pos-keep
		if size-n < size/4 {
			s.buf = slices.Grow(s.buf, size)
		}
	}
	read, err := s.r.Read(s.buf[len(s.buf):cap(s.buf)])
	s.buf = s.buf[:len(s.buf)+read]
	s.d.data = s.buf
	if err != nil {
		s.eof = true
		if !errors.Is(err, io.EOF) {
			s.err = err
		}
	}
	return nil
}

// peek skips whitespace, reading as needed, and returns the next byte; 0 at the end.
func (s *listReader) peek() (byte, error) {
	for {
		s.d.skipSpace()
		if s.d.pos < len(s.d.data) {
			return s.d.data[s.d.pos], nil
		}
		if s.eof {
			return 0, s.err
		}
		if err := s.more(); err != nil {
			return 0, err
		}
	}
}

// complete reads until the value at the position (after whitespace) is whole in the
// buffer. An object or array ends where its brackets balance, a string at its closing
// quote, a number or literal at the first byte that cannot be in one (each found once,
// resuming across reads); the decoder then validates it. Invalid JSON may make it read to the end, where
// the decoder reports it.
func (s *listReader) complete() error {
	var scan bracketScan
	for {
		if _, err := s.peek(); err != nil {
			return err
		}
		data := s.d.data[s.d.pos:]
		if len(data) > 0 {
			switch data[0] {
			case '{', '[':
				if _, ok := scan.advance(data); ok {
					return nil
				}
			case '"':
				if scan.advanceString(data) {
					return nil
				}
			default: // a number or a literal, or not a value: the decoder says which
				if scan.advanceToken(data) {
					return nil
				}
			}
		}
		if s.eof {
			return s.err // cut short: the decoder reports it
		}
		if err := s.more(); err != nil {
			return err
		}
	}
}

// document decodes the top-level object as d.document(document|list) does, streaming the
// items of a member "items" that is an array.
func (s *listReader) document() (map[string]any, error) {
	d := s.d
	s.mark = -1
	if c, err := s.peek(); err != nil {
		return nil, err
	} else if c != '{' {
		return nil, ErrUnusual // valid or not, not an object: the reference decides
	}
	d.pos++
	d.depth = 1
	if c, err := s.peek(); err != nil {
		return nil, err
	} else if c == '}' {
		d.pos++
		return map[string]any{}, s.end()
	}
	for {
		if err := s.member(); err != nil {
			return nil, err
		}
		c, err := s.peek()
		if err != nil {
			return nil, err
		}
		if c == ',' {
			d.pos++
			continue
		}
		if c != '}' {
			return nil, d.syntaxError("',' or '}' after object member")
		}
		break
	}
	d.pos++
	d.depth = 0
	m := d.buildMap(0)
	return m, s.end()
}

// member decodes one top-level member: "items" with an array value item by item, any other
// with d.member once it is whole in the buffer.
func (s *listReader) member() error {
	d := s.d
	s.mark = d.pos // kept until d.member has read the key again
	defer func() { s.mark = -1 }()
	if err := s.complete(); err != nil {
		return err
	}
	if d.peek() != '"' {
		return d.syntaxError("'\"' starting an object key")
	}
	key, _, err := d.key()
	if err != nil {
		return err
	}
	if c, err := s.peek(); err != nil {
		return err
	} else if c != ':' {
		return d.syntaxError("':' after object key")
	}
	d.pos++
	if c, err := s.peek(); err != nil {
		return err
	} else if key == "items" && c == '[' {
		s.mark = -1
		return s.items()
	}
	if err := s.complete(); err != nil {
		return err
	}
	d.pos = s.mark
	return d.member(document | list)
}

// items decodes a list's items array as d.listItems does, one item at a time.
func (s *listReader) items() error {
	d := s.d
	d.pos++ // '['
	if err := d.push(); err != nil {
		return err
	}
	d.items = d.items[:0]
	c, err := s.peek()
	if err == nil && c == ']' {
		d.pos++
		d.depth--
		return nil
	}
	for err == nil {
		if err = s.item(); err != nil {
			return err
		}
		if c, err = s.peek(); err == nil && c == ',' {
			d.pos++
			continue
		} else if err == nil && c == ']' {
			d.pos++
			d.depth--
			return nil
		} else if err == nil {
			return d.syntaxError("',' or ']' after list item")
		}
	}
	return err
}

// item decodes one list item at the position. It decodes what the buffer holds first,
// which is the whole item for all but one item per read. When that fails before the end of
// the input the item may be cut: what the failed attempt pushed is dropped, the item's end is
// read (complete) and it is decoded again, so that an error is the verdict on the whole item.
// (A cut item never decodes: its closing brace is missing. Subtrees the attempt shared are
// whole, since each ends with its closing bracket.)
func (s *listReader) item() error {
	d := s.d
	if _, err := s.peek(); err != nil {
		return err
	}
	start, depth, pairs, elems := d.pos, d.depth, len(d.pairs), len(d.elems)
	err := d.listItem()
	if err == nil || s.eof {
		return err
	}
	clear(d.pairs[pairs:])
	clear(d.elems[elems:])
	d.pairs, d.elems = d.pairs[:pairs], d.elems[:elems]
	d.pos, d.depth = start, depth
	if err := s.complete(); err != nil {
		return err
	}
	return d.listItem()
}

// end checks that only whitespace follows the document, to the end of the reader.
func (s *listReader) end() error {
	c, err := s.peek()
	if err != nil {
		return err
	}
	if c != 0 || s.d.pos < len(s.d.data) {
		return s.d.syntaxError("end of input")
	}
	return nil
}

// advanceString finds the end of the string data starts with, resuming where it stopped.
func (s *bracketScan) advanceString(data []byte) bool {
	if s.pos == 0 {
		s.pos, s.inString = 1, true
	}
	for i := s.pos; i < len(data); i++ {
		switch c := data[i]; {
		case s.escaped:
			s.escaped = false
		case c == '\\':
			s.escaped = true
		case c == '"':
			s.pos = i + 1
			return true
		}
	}
	s.pos = len(data)
	return false
}

// advanceToken finds the end of the number or literal data starts with, resuming where it
// stopped: the first byte none can hold.
func (s *bracketScan) advanceToken(data []byte) bool {
	for i := s.pos; i < len(data); i++ {
		if !tokenByte(data[i]) {
			s.pos = i
			return true
		}
	}
	s.pos = len(data)
	return false
}

// tokenByte reports whether c can be part of a number or a literal.
func tokenByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '+' || c == '-' || c == '.'
}
