package webui

// ContentSecurityPolicy lets the tests check the header against the policy.
const ContentSecurityPolicy = contentSecurityPolicy
