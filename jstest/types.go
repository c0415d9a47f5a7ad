package jstest

import (
	_ "embed"
	"slices"
)

//go:embed jsinformer-test.d.ts
var declarations []byte

// Declarations is jsinformer-test.d.ts: TypeScript declarations of the globals test files
// see (test, it, describe, beforeEach, afterEach, expect, harness) and of the harness they
// return, for editors and tsc. It builds on scripting.Declarations (jsinformer.d.ts), which
// it references. `runner types` writes both; a test keeps this one in step with what
// install, expect.js and the harness define.
func Declarations() []byte { return slices.Clone(declarations) }
