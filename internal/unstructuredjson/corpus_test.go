package unstructuredjson_test

import (
	"strings"
)

// class says what the decoder must do with a corpus document.
type class int

const (
	fast    class = iota // decoded by the fast path, equal to apimachinery
	unusual              // valid JSON the fast path leaves to apimachinery (as a document)
	invalid              // apimachinery rejects it; so must the fast path
)

type corpusCase struct {
	name  string
	class class
	doc   string // a whole JSON document, meant as one object
}

// head is what every corpus object starts with.
const head = `{"apiVersion":"example.com/v1","kind":"Odd","metadata":{"name":"odd","namespace":"ns"},`

func obj(body string) string { return head + body + "}" }

// nested is depth levels of arrays around a number, then the object's closing brace: the
// object itself is one more level.
func nested(depth int) string {
	return head + `"deep":` + strings.Repeat("[", depth) + "1" + strings.Repeat("]", depth) + "}"
}

// corpus is the differential corpus: CRD-style objects with odd JSON.
var corpus = []corpusCase{
	{"minimal", fast, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`},
	{"core group, data", fast, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"v","":"empty key"}}`},
	{"small ints", fast, obj(`"n":[0,-0,1,-1,7,255,256,-256,65536]`)},
	{"int64 bounds", fast, obj(`"n":[9223372036854775807,-9223372036854775808,123456789012345678,-123456789012345678,1234567890123456789]`)},
	{"beyond int64 is float", fast, obj(`"n":[9223372036854775808,-9223372036854775809,123456789012345678901234567890,18446744073709551616]`)},
	{"exponents", fast, obj(`"n":[1e3,1E3,1e+3,1e-3,-1e3,0e0,1E-0,1.7976931348623157e308,1.5e308,4.9e-324,1e-400,-1e-400]`)},
	{"fractions", fast, obj(`"n":[1.0,-0.0,0.5,-0.5,3.141592653589793,2.2250738585072011e-308,0.1,100.000]`)},
	{"numbers as map values", fast, obj(`"spec":{"replicas":3,"ratio":0.25,"big":99999999999999999999,"neg":-42,"zero":-0}`)},
	{"unicode escapes", fast, obj(`"s":["\u00e9","\u20AC","\u0041\u0062","\u0000","\u001f","\uffff","\ufffd"]`)},
	{"surrogate pairs", fast, obj(`"s":["\ud83d\ude00","a\uD83D\uDE00b","\udbff\udfff"]`)},
	{"lone surrogates", fast, obj(`"s":["\ud83d","\ude00","\ud83d\u0041","\ude00\ud83d","\ud83dx","\ud83d\ud83d\ude00","\ud83d\\u"]`)},
	{"short escapes", fast, obj(`"s":"\" \\ \/ \b \f \n \r \t"`)},
	{"raw utf-8", fast, obj(`"s":["héllo","日本語","😀","` + "\u007f" + `"]`)},
	{"invalid utf-8", fast, obj(`"s":["` + "\xff" + `","a` + "\xe2\x82" + `b","` + "\xed\xa0\x80" + `","` + "\xc0\xaf" + `","` + "\xf4\x90\x80\x80" + `"]`)},
	{"invalid utf-8 with escapes", fast, obj(`"s":"\n` + "\xff\xfe" + `\u00e9"`)},
	{"invalid utf-8 in a key", fast, obj(`"k` + "\xff" + `":1,"k\u00e9":2,"ké":3`)},
	{"escaped keys", fast, obj(`"a\u0062c":1,"\"q\"":2,"\\":3`)},
	{"unicode keys", fast, obj(`"日本":1,"😀":{"ключ":"значение"}`)},
	{"long keys", fast, obj(`"` + strings.Repeat("k", 65) + `":1,"` + strings.Repeat("k", 64) + `":2`)},
	{"duplicate keys", fast, obj(`"a":1,"a":2,"b":{"c":1,"c":"two"},"b2":{"x":[1]},"b2":null`)},
	{"duplicate kind", fast, `{"apiVersion":"v1","kind":"A","kind":"ConfigMap","metadata":{}}`},
	{"escaped kind key", fast, `{"apiVersion":"v1","\u006bind":"ConfigMap"}`},
	{"null apiVersion after one", fast, `{"apiVersion":"v1","apiVersion":null,"kind":"X"}`},
	{"no apiVersion", fast, `{"kind":"Thing","spec":{}}`},
	{"duplicate metadata", fast, obj(`"metadata":{"name":"second","managedFields":[{"manager":"m"}]}`)},
	{"empty containers", fast, obj(`"a":{},"b":[],"c":[{}],"d":[[]],"e":{"f":{}},"g":""`)},
	{"nulls and booleans", fast, obj(`"a":null,"b":true,"c":false,"d":[null,true,false],"e":{"x":null}`)},
	{"whitespace", fast, " \t\r\n{ \"apiVersion\" : \"v1\" ,\n\t\"kind\":\"X\" , \"a\" : [ 1 , { } , [ ] ] }\n "},
	{"deep nesting", fast, nested(9997)},
	{"deep objects", fast, obj(`"d":` + strings.Repeat(`{"a":`, 500) + "null" + strings.Repeat("}", 500))},
	{"managedFields", fast, `{"apiVersion":"example.com/v1","kind":"Odd","spec":{"managedFields":"kept: not metadata"},` +
		`"metadata":{"name":"m","managedFields":[{"manager":"kubectl","operation":"Apply","fieldsV1":{"f:spec":{"f:x":{}}},` +
		`"time":"2026-01-01T00:00:00Z"}],"labels":{"a":"b"}},"status":{}}`},
	{"managedFields odd values", fast, obj(`"metadata":{"managedFields":[1e308,-0,"\ud83d",{"a":[[[]]]},null,true,123456789012345678901234]}`)},
	{"managedFields not a list", fast, obj(`"metadata":{"managedFields":"x","name":"n"}`)},
	{"managedFields twice", fast, obj(`"metadata":{"managedFields":[],"name":"n","managedFields":null}`)},
	{"metadata not an object", fast, obj(`"metadata":"m"`)},
	{"metadata null", fast, obj(`"metadata":null`)},
	{"list-shaped object", fast, `{"apiVersion":"v1","kind":"ThingList","items":[{"a":1},null]}`},

	{"Kind in other case", unusual, `{"apiVersion":"v1","kind":"ConfigMap","Kind":"Secret"}`},
	{"APIVERSION", unusual, `{"APIVERSION":"v1","kind":"ConfigMap"}`},
	{"Kelvin sign kind", unusual, `{"apiVersion":"v1","kind":"X","` + "\u212a" + `ind":"Y"}`},
	{"kind not a string", unusual, `{"apiVersion":"v1","kind":5}`},
	{"kind number then string", unusual, `{"apiVersion":"v1","kind":5,"kind":"X"}`},
	{"kind null", unusual, `{"apiVersion":"v1","kind":null}`},
	{"apiVersion object", unusual, `{"apiVersion":{},"kind":"X"}`},
	{"apiVersion malformed", unusual, `{"apiVersion":"a/b/c","kind":"X"}`},
	{"apiVersion malformed then null", unusual, `{"apiVersion":"a/b/c","apiVersion":null,"kind":"X"}`},
	{"no kind", unusual, `{"apiVersion":"v1","metadata":{"name":"a"}}`},
	{"empty kind", unusual, `{"apiVersion":"v1","kind":""}`},
	{"empty object", unusual, `{}`},
	{"top-level array", unusual, `[{"kind":"X"}]`},
	{"top-level null", unusual, `null`},

	{"empty document", invalid, ``},
	{"trailing garbage", invalid, obj(`"a":1`) + `x`},
	{"two documents", invalid, obj(`"a":1`) + obj(`"a":1`)},
	{"trailing comma in object", invalid, obj(`"a":1,`)},
	{"trailing comma in array", invalid, obj(`"a":[1,]`)},
	{"missing colon", invalid, obj(`"a" 1`)},
	{"missing comma", invalid, obj(`"a":1 "b":2`)},
	{"unterminated string", invalid, obj(`"a":"x`)},
	{"unterminated object", invalid, head + `"a":1`},
	{"bad escape", invalid, obj(`"a":"\x41"`)},
	{"single quote escape", invalid, obj(`"a":"\'"`)},
	{"short unicode escape", invalid, obj(`"a":"\u12"`)},
	{"bad unicode escape", invalid, obj(`"a":"\u12g4"`)},
	{"control character", invalid, obj("\"a\":\"x\ny\"")},
	{"tab in string", invalid, obj("\"a\":\"x\ty\"")},
	{"leading zero", invalid, obj(`"a":01`)},
	{"bare minus", invalid, obj(`"a":-`)},
	{"dot without digits", invalid, obj(`"a":1.`)},
	{"leading dot", invalid, obj(`"a":.5`)},
	{"plus sign", invalid, obj(`"a":+1`)},
	{"empty exponent", invalid, obj(`"a":1e`)},
	{"NaN", invalid, obj(`"a":NaN`)},
	{"Infinity", invalid, obj(`"a":-Infinity`)},
	{"float overflow", invalid, obj(`"a":1e400`)},
	{"float overflow just above max", invalid, obj(`"a":2e308`)},
	{"negative float overflow", invalid, obj(`"a":-1.8e308`)},
	{"integer overflowing float", invalid, obj(`"a":1` + strings.Repeat("0", 400))},
	{"overflow inside managedFields", invalid, obj(`"metadata":{"managedFields":[{"a":1e999}]}`)},
	{"bad escape inside managedFields", invalid, obj(`"metadata":{"managedFields":["\q"]}`)},
	{"bad syntax inside managedFields", invalid, obj(`"metadata":{"managedFields":[1 2]}`)},
	{"misspelt literal", invalid, obj(`"a":tru`)},
	{"literal with tail", invalid, obj(`"a":truex`)},
	{"nul", invalid, obj(`"a":nul`)},
	{"single quotes", invalid, obj(`'a':1`)},
	{"comment", invalid, obj(`"a":1 /* no */`)},
	{"unquoted key", invalid, obj(`a:1`)},
	{"too deep", invalid, nested(10000)},
	{"too deep objects", invalid, obj(`"d":` + strings.Repeat(`{"a":`, 10000) + "null" + strings.Repeat("}", 10000))},
}
