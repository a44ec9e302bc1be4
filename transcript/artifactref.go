package transcript

// ValidArtifactRef reports whether ref has the form of an artifact's
// reference (Artifact.Ref): 32 lowercase hex digits. The history that keeps
// artifacts, the presentation host that writes them and the server that
// serves them all check a ref with it before it comes near a path.
func ValidArtifactRef(ref string) bool {
	if len(ref) != 32 {
		return false
	}
	for i := 0; i < len(ref); i++ {
		if c := ref[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
