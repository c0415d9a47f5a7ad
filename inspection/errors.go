package inspection

import "errors"

// ErrNotFound is wrapped by inspection errors about a script, resource, object, key or index
// that does not exist (the message suggests close names); the debug API answers 404.
var ErrNotFound = errors.New("not found")

// ErrInvalid is wrapped by inspection errors about a request that cannot be served as asked
// (an object key that does not fit the resource's scope, a replay with --dry-run while
// recording is off, retry of a script without reconcile); the debug API answers 400.
var ErrInvalid = errors.New("invalid request")

// ErrTraceOff is returned by Subscribe when the runner records no traces.
var ErrTraceOff = errors.New("trace recording is off (--trace-records 0)")
