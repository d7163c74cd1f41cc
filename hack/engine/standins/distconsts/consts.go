// Package distconsts stands in for github.com/dagger/dagger/engine/distconsts,
// a nested module of Dagger v0.21.8 that the Go module proxy does not serve.
// It holds only the constants the engine and CLI read, with the v0.21.8 values.
package distconsts

// Names and paths of the engine as it runs in its own container image.
const (
	EngineContainerName              = "dagger-engine.dev"
	DefaultEngineSockAddr            = "unix:///run/dagger/engine.sock"
	RuncPath                         = "/usr/local/bin/runc"
	DaggerInitPath                   = "/usr/local/bin/dagger-init"
	TiniPath                         = "/usr/local/bin/tini"
	EngineDefaultStateDir            = "/var/lib/dagger"
	EngineContainerBuiltinContentDir = "/usr/local/share/dagger/content"
	EngineCustomCACertsDir           = "/usr/local/share/ca-certificates"
)

// Environment variables that carry the digests of the built-in SDK images.
const (
	GoSDKManifestDigestEnvName         = "DAGGER_GO_SDK_MANIFEST_DIGEST"
	PythonSDKManifestDigestEnvName     = "DAGGER_PYTHON_SDK_MANIFEST_DIGEST"
	TypescriptSDKManifestDigestEnvName = "DAGGER_TYPESCRIPT_SDK_MANIFEST_DIGEST"
)

// Base images the engine refers to by name.
const (
	AlpineVersion  = "3.22.1"
	AlpineImage    = "alpine:" + AlpineVersion
	GolangVersion  = "1.26"
	GolangImage    = "golang:" + GolangVersion + "-alpine"
	BusyboxVersion = "1.37.0"
	BusyboxImage   = "busybox:" + BusyboxVersion
)

// OCIVersionAnnotation is the image annotation that carries a version.
const OCIVersionAnnotation = "org.opencontainers.image.version"
