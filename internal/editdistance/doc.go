// Package editdistance measures how far apart two names are, for "did you mean" suggestions
// in error messages (misspelt resource names, definition keys, option names).
package editdistance
