package unstructuredjson

// skip validates the value at the position exactly as value would decode it, errors
// included, and moves past it without allocating anything.
func (d *decoder) skip() error {
	d.skipSpace()
	switch c := d.peek(); {
	case c == '{':
		return d.skipContainer('}', true)
	case c == '[':
		return d.skipContainer(']', false)
	case c == '"':
		_, _, err := d.scanString()
		return err
	case c == '-' || (c >= '0' && c <= '9'):
		return d.skipNumber()
	default:
		_, err := d.literal()
		return err
	}
}

// skipContainer skips an object (keyed) or an array closed by closer.
func (d *decoder) skipContainer(closer byte, keyed bool) error {
	d.pos++
	if err := d.push(); err != nil {
		return err
	}
	d.skipSpace()
	if d.peek() == closer {
		d.pos++
		d.depth--
		return nil
	}
	for {
		if keyed {
			if err := d.skipKey(); err != nil {
				return err
			}
		}
		if err := d.skip(); err != nil {
			return err
		}
		d.skipSpace()
		switch d.peek() {
		case ',':
			d.pos++
			continue
		case closer:
			d.pos++
			d.depth--
			return nil
		}
		return d.syntaxError("',' or the end of the object or array")
	}
}

// skipKey skips `"key":`.
func (d *decoder) skipKey() error {
	d.skipSpace()
	if d.peek() != '"' {
		return d.syntaxError("'\"' starting an object key")
	}
	if _, _, err := d.scanString(); err != nil {
		return err
	}
	d.skipSpace()
	if d.peek() != ':' {
		return d.syntaxError("':' after object key")
	}
	d.pos++
	return nil
}

// skipNumber validates a number, range included: only an integer literal of 18 bytes or
// fewer is sure to be in range without converting it.
func (d *decoder) skipNumber() error {
	lit, integer, err := d.scanNumber()
	if err != nil || d.frame || (integer && len(lit) <= 18) {
		return err
	}
	_, err = convertNumber(lit, integer)
	return err
}
