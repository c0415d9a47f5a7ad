// Command image builds the runner's container image without a container daemon or a base
// image: one layer holding a static runner binary, CA certificates and a non-root user, on an
// empty base. It writes an OCI image layout (for skopeo, crane, or a registry push) and,
// optionally, a `docker save` tarball (for `docker load`, `podman load`, `kind load
// image-archive`). `make image` runs it; docs/deploy.md tells how to push the result.
//
// The output depends only on the inputs: file times and the image's creation time are the
// Unix epoch (or $SOURCE_DATE_EPOCH), so rebuilding the same binary gives the same digest.
//
// It refuses a binary that is not a statically linked Linux ELF executable: in an image with
// no C library such a binary cannot start, and the image's platform is read from it.
package main
