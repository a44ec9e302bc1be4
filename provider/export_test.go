package provider

// The tests (package provider_test) reach these unexported pieces.
var (
	RetryAfter        = retryAfter
	IdleTimeoutClient = idleTimeoutClient
	Registered        = registered
)

const (
	DefaultDemoRate = defaultDemoRate
)
