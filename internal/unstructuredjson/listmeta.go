package unstructuredjson

// ListContinue reads a list document's metadata.continue without decoding its items, so
// that the request for a paged list's next page can be sent before this page is decoded. It
// reads the top-level members up to "items" (the apiserver writes kind, apiVersion and
// metadata first) and returns the last metadata's "continue" string, "" when there is none.
// ok is false when the document is not an object, has no "items", or is invalid before them.
//
// The token is a hint, not a result: members after "items" are not read, so a document that
// repeats "metadata" after its items has another token. Callers use List's result, and may
// use the hint only to guess the next request.
func ListContinue(data []byte) (token string, ok bool) {
	d := getDecoder(data, false)
	defer d.put()
	d.skipSpace()
	if d.peek() != '{' {
		return "", false
	}
	d.pos++
	for {
		key, err := d.memberKey()
		if err != nil {
			return "", false
		}
		switch {
		case key == "items":
			return token, true
		case key == "metadata" && d.peek() == '{':
			meta, err := d.object(plain)
			if err != nil {
				return "", false
			}
			token, _ = meta["continue"].(string)
		default:
			if err := d.skip(); err != nil {
				return "", false
			}
		}
		d.skipSpace()
		if d.peek() != ',' {
			return "", false // the end of the document, with no items, or invalid
		}
		d.pos++
	}
}

// memberKey reads an object member's key and the colon after it, leaving the position at its
// value.
func (d *decoder) memberKey() (string, error) {
	d.skipSpace()
	if d.peek() != '"' {
		return "", d.syntaxError("'\"' starting an object key")
	}
	key, err := d.key()
	if err != nil {
		return "", err
	}
	d.skipSpace()
	if d.peek() != ':' {
		return "", d.syntaxError("':' after object key")
	}
	d.pos++
	d.skipSpace()
	return key, nil
}
