package scripting

// DefinesAdmission compiles and evaluates the plugin name of dir with content as the runner
// does before it validates the definition, and reports whether it defines validate or mutate.
// The error is the compile or evaluation error, with file:line:col.
func DefinesAdmission(dir, name string, content []byte) (bool, error) {
	prg, err := CompileIn(dir, name, content)
	if err != nil {
		return false, err
	}
	s, err := prg.Instantiate(Options{})
	if err != nil {
		return false, err
	}
	defer s.Close()
	def := s.Definition()
	return def.Validate || def.Mutate, nil
}
