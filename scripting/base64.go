package scripting

import (
	"encoding/base64"
	"fmt"

	"github.com/dop251/goja"
)

// util.base64Encode and util.base64Decode: goja has no atob/btoa, and Secret data is base64.
// Strings are treated as UTF-8, as Kubernetes treats Secret values; decoding accepts standard
// padded base64 only, the encoding the API server produces.

func (u *utilModule) base64Encode(call goja.FunctionCall) goja.Value {
	str := u.stringArg("util.base64Encode", call, 0, "value")
	return u.rt.ToValue(base64.StdEncoding.EncodeToString([]byte(str)))
}

func (u *utilModule) base64Decode(call goja.FunctionCall) goja.Value {
	str := u.stringArg("util.base64Decode", call, 0, "value")
	data, err := base64.StdEncoding.DecodeString(str)
	if err != nil {
		panic(u.rt.NewTypeError(fmt.Sprintf("util.base64Decode: not base64: %v", err)))
	}
	return u.rt.ToValue(string(data))
}
