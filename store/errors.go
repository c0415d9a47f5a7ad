package store

import (
	"errors"
	"fmt"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ErrConflict is what every *ConflictError matches with errors.Is.
var ErrConflict = errors.New("version conflict")

// ErrClosed is returned by writes after Close.
var ErrClosed = errors.New("store closed")

// ConflictError is a compare-and-set whose expected version is not the key's current one.
// It is an apierrors.APIStatus (409, reason Conflict), so scripts see code and reason.
type ConflictError struct {
	Key      string
	Expected int64 // the version the write expected (0: absent)
	Actual   int64 // the key's version when the write was applied (0: absent)
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("store key %q: %v: expected version %d, found %d (get the key again and retry)",
		e.Key, ErrConflict, e.Expected, e.Actual)
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// Status is the error as a Kubernetes status: 409 Conflict.
func (e *ConflictError) Status() metav1.Status {
	return metav1.Status{Status: metav1.StatusFailure, Code: http.StatusConflict,
		Reason: metav1.StatusReasonConflict, Message: e.Error()}
}

// ErrLimit is what every *LimitError matches with errors.Is.
var ErrLimit = errors.New("store limit exceeded")

// LimitError is a write refused because it would exceed a limit. It is an
// apierrors.APIStatus (413, reason RequestEntityTooLarge).
type LimitError struct {
	Key   string
	Limit string // the limit's name, as the runner's flag calls it: "max-value-bytes"
	Value int    // what the write would make it
	Max   int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("store key %q: %v: %s would be %d, the limit is %d", e.Key, ErrLimit, e.Limit, e.Value, e.Max)
}

// Is makes errors.Is(err, ErrLimit) true.
func (e *LimitError) Is(target error) bool { return target == ErrLimit }

// Status is the error as a Kubernetes status: 413 RequestEntityTooLarge.
func (e *LimitError) Status() metav1.Status {
	return metav1.Status{Status: metav1.StatusFailure, Code: http.StatusRequestEntityTooLarge,
		Reason: metav1.StatusReasonRequestEntityTooLarge, Message: e.Error()}
}
