package unstructuredjson

// WatchEvent reads one watch event frame, {"type": "ADDED", "object": {...}}, and returns
// its type and the bytes of its object: a sub-slice of data, validated as JSON (nesting
// counted from the frame, as the reference counts it). Anything but exactly those two
// members, a string type and an object, is ErrUnusual.
func WatchEvent(data []byte) (eventType string, object []byte, err error) {
	d := getDecoder(data, false)
	defer d.put()
	d.skipSpace()
	if d.peek() != '{' {
		return "", nil, ErrUnusual
	}
	d.pos++
	d.depth = 1
	var seenType bool
	for {
		d.skipSpace()
		if d.peek() != '"' {
			return "", nil, ErrUnusual // also an empty frame, "{}"
		}
		key, _, err := d.key()
		if err != nil {
			return "", nil, err
		}
		d.skipSpace()
		if d.peek() != ':' {
			return "", nil, d.syntaxError("':' after object key")
		}
		d.pos++
		d.skipSpace()
		switch {
		case key == "type" && !seenType && d.peek() == '"':
			seenType = true
			if eventType, err = d.str(); err != nil {
				return "", nil, err
			}
		case key == "object" && object == nil && d.peek() == '{':
			start := d.pos
			if err := d.skip(); err != nil {
				return "", nil, err
			}
			object = data[start:d.pos]
		default:
			return "", nil, ErrUnusual
		}
		d.skipSpace()
		switch d.peek() {
		case ',':
			d.pos++
			continue
		case '}':
			d.pos++
		default:
			return "", nil, d.syntaxError("',' or '}' after object member")
		}
		break
	}
	if !seenType || object == nil {
		return "", nil, ErrUnusual
	}
	return eventType, object, d.end()
}
