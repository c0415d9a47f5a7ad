package engine

// setState moves v to s and tells the state API.
func (v *version) setState(s versionState) {
	v.state.Store(int32(s))
	switch {
	case v.book == nil:
	case s == stateDone:
		v.book.Done(v.name, v)
	default:
		v.book.Bump()
	}
}

func (v *version) currentState() versionState { return versionState(v.state.Load()) }
