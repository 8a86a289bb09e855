# syntax=docker/dockerfile:1
# The svc image: the service (svc serve) and the whole CLI, from the release
# binary that goreleaser built (dockers_v2 in .goreleaser.yaml copies it into
# the build context as $TARGETPLATFORM/svc). Nothing is compiled here.
#
# svc is built with cgo (ONNX Runtime and PKCS#11 modules are loaded with
# dlopen), so the base has glibc, libgcc and libstdc++ and nothing else: no
# shell, no package manager. The default is Google's distroless cc image on
# Debian 12, whose glibc (2.36) is the one the release binary is linked
# against. Pin it by digest for a release (--build-arg BASE=...@sha256:...);
# scripts/build-images.sh builds an equivalent base from this machine's
# Debian 12 libraries to test the image offline (docs/OPERATIONS.md,
# Container images).
ARG BASE=gcr.io/distroless/cc-debian12:nonroot
FROM ${BASE}

ARG TARGETPLATFORM
ARG VERSION=dev
ARG REVISION=unknown
ARG CREATED=1970-01-01T00:00:00Z
ARG SOURCE=https://github.com/svc-gov/svc

LABEL org.opencontainers.image.title="svc" \
      org.opencontainers.image.description="Governance Proof Service: records governance checks, issues and verifies VPECs" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.documentation="${SOURCE}/blob/main/docs/OPERATIONS.md" \
      org.opencontainers.image.licenses="Apache-2.0"

COPY ${TARGETPLATFORM}/svc /usr/local/bin/svc

# Not root: distroless's nonroot user. Everything svc writes is under the
# data directory, a volume: the root filesystem can be read-only. WORKDIR
# after USER makes the directory belong to that user (BuildKit, Buildah).
USER 65532:65532
WORKDIR /var/lib/svc
ENV SVC_DATA_DIR=/var/lib/svc
VOLUME ["/var/lib/svc"]
EXPOSE 8080

# No shell or curl in the image: the binary probes itself (exit 0 healthy,
# 1 not).
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
    CMD ["/usr/local/bin/svc", "healthcheck", "--url", "http://127.0.0.1:8080/healthz", "--timeout", "4s"]

ENTRYPOINT ["/usr/local/bin/svc"]
CMD ["serve", "--addr", "0.0.0.0:8080", "--log-format", "json"]
