package reconcile

// DropCounter is implemented by a Config.Metrics that also counts the keys given up on after
// MaxRetries failures (the engine's jsinformer_reconcile_keys_dropped_total). The keys
// themselves, with their last error, are remembered by the KeyBook (Finished with gaveUp).
type DropCounter interface {
	Dropped()
}

// countDrop tells Config.Metrics that a key was given up on, if it counts drops.
func (r *Workers[R]) countDrop() {
	if c, ok := r.cfg.Metrics.(DropCounter); ok {
		c.Dropped()
	}
}
