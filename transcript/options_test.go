package transcript

// withIDSource makes the store take entry IDs from ids, so a test can
// predict them.
func withIDSource(ids *IDSource) Option { return func(s *Store) { s.ids = ids } }
