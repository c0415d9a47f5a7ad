package engine

// SetHeapForTest makes the memory guard read heap instead of the process's live heap, so a
// test sharing its process with others decides what the guard sees.
func SetHeapForTest(c *Config, heap func() int64) { c.heap = heap }
