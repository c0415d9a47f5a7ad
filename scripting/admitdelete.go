package scripting

import (
	"errors"
	"strings"
)

// deleteHint is the hint an admission call's TypeError about null gets on DELETE, where obj
// is null: a policy written for CREATE and UPDATE that reads obj.metadata throws there, and
// under failurePolicy Fail it would deny every delete with an error that says nothing of why.
const deleteHint = " (obj is null on DELETE; use ctx.oldObject)"

// withDeleteHint adds deleteHint to err when req is a DELETE (its obj null) and err is a
// TypeError about using null or undefined as an object, the error reading a property of obj
// gives. goja's message cannot tell obj from another undefined value, so the hint names the
// likely cause. Other errors are returned as they are.
func withDeleteHint(req AdmissionRequest, err error) error {
	var se *ScriptError
	if req.Operation != "DELETE" || req.Object != nil || !errors.As(err, &se) {
		return err
	}
	if strings.HasPrefix(se.Message, "TypeError: ") && aboutNull(se.Message) && !strings.HasSuffix(se.Message, deleteHint) {
		se.Message += deleteHint
	}
	return err
}

// nullMessages are goja's TypeErrors for using null as an object: reading a property of it
// (goja says "of undefined" for null too), destructuring it, writing or enumerating it.
var nullMessages = []string{"Cannot read property ", "not object coercible", "undefined or null"}

func aboutNull(msg string) bool {
	for _, m := range nullMessages {
		if strings.Contains(msg, m) {
			return true
		}
	}
	return false
}
