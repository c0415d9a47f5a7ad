package dynamicinformer

// SetPageSize makes the informers f starts from now on list pages of n objects, so that a
// test gets several pages out of a few objects.
func SetPageSize(f *Factory, n int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pageSize = n
}
