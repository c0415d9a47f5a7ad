package engine

// ScriptMemory is each script's runtimes' memory as the memory guard last measured it. The
// guard measures only while the heap is above half the memory limit, so a script is absent
// before that. Safe for concurrent use.
func (e *Engine) ScriptMemory() map[string]int64 {
	out := map[string]int64{}
	e.memory.Range(func(k, v any) bool {
		out[k.(string)] = v.(int64)
		return true
	})
	return out
}
