//go:build race

package web_test

// raceDetector: the race detector slows the server's snapshot (20,000 keys) several times.
const raceDetector = true
