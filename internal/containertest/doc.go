// Package containertest tests the container images of svc and svc-verify:
// their Dockerfiles (container/) and the goreleaser entries that build them
// (dockers_v2 in .goreleaser.yaml), and, where Buildah and Podman are
// installed, the images themselves, built offline by scripts/build-images.sh
// and run read-only as their non-root user. It has no code of its own.
package containertest
