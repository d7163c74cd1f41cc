// Command registry serves the locally built stand-in images as an OCI registry on a
// loopback address, so that the offline Dagger engine (whose engine.json mirrors
// docker.io to it) resolves From("radixark/miles:dev") and friends without a network.
//
// usage: registry -layout DIR [-addr 127.0.0.1:5000] -image NAME=TAG ...
//
// Each -image maps a Docker image name (as production code writes it) to a tag of the
// OCI layout DIR. The images are pushed into an in-memory registry before the listener
// reports ready by writing -ready FILE.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

type imageFlags []string

func (f *imageFlags) String() string     { return strings.Join(*f, ",") }
func (f *imageFlags) Set(v string) error { *f = append(*f, v); return nil }

func main() {
	var images imageFlags
	dir := flag.String("layout", "", "OCI image layout holding the images")
	addr := flag.String("addr", "127.0.0.1:5000", "loopback address to listen on")
	ready := flag.String("ready", "", "file written once every image is served")
	flag.Var(&images, "image", "NAME=TAG: serve layout tag TAG as image NAME (repeatable)")
	flag.Parse()
	log.Fatalf("registry: %v", run(*dir, *addr, *ready, images))
}

// run serves the images until the process is killed; it returns only an error.
func run(dir, addr, ready string, images []string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("-addr %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("-addr %q: only loopback addresses are allowed", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: registry.New(registry.Logger(log.New(os.Stderr, "registry: ", 0)))}
	go func() { _ = srv.Serve(ln) }()

	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return fmt.Errorf("-layout %q: %w", dir, err)
	}
	manifest, err := idx.IndexManifest()
	if err != nil {
		return fmt.Errorf("-layout %q: %w", dir, err)
	}
	for _, m := range images {
		nameTag, tag, ok := strings.Cut(m, "=")
		if !ok {
			return fmt.Errorf("-image %q: want NAME=TAG, e.g. radixark/miles:dev=miles-dev", m)
		}
		img, err := imageByTag(idx, manifest, tag)
		if err != nil {
			return fmt.Errorf("-image %q: %w", m, err)
		}
		src, err := name.ParseReference(nameTag)
		if err != nil {
			return fmt.Errorf("-image %q: %w", m, err)
		}
		dst, err := name.ParseReference(addr+"/"+src.Context().RepositoryStr()+":"+src.Identifier(), name.Insecure)
		if err != nil {
			return fmt.Errorf("-image %q: %w", m, err)
		}
		if err := remote.Write(dst, img); err != nil {
			return fmt.Errorf("-image %q: push to %s: %w", m, dst, err)
		}
		log.Printf("registry: serving %s as %s", tag, dst)
	}
	if ready != "" {
		if err := os.WriteFile(ready, []byte("ok\n"), 0o644); err != nil {
			return err
		}
	}
	select {}
}

func imageByTag(idx v1.ImageIndex, m *v1.IndexManifest, tag string) (v1.Image, error) {
	for _, d := range m.Manifests {
		if d.Annotations["org.opencontainers.image.ref.name"] == tag {
			return idx.Image(d.Digest)
		}
	}
	return nil, fmt.Errorf("tag %q not in the layout; run hack/engine/engine.sh build", tag)
}
