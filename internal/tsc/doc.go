// Package tsc runs the pinned TypeScript compiler for tests: Install puts it into the
// repository's bin/ folder once (from the npm registry, shared by later runs and by
// concurrent ones), and Check runs it over a folder with a tsconfig.json.
//
// It is for tests only: it fails the test, never skips it, when Node.js or npm is missing.
// Nothing here keeps state or runs goroutines beyond the child processes Check waits for.
package tsc
