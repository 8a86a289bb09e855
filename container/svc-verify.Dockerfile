# syntax=docker/dockerfile:1
# The svc-verify image: the offline verifier, a static binary (CGO_ENABLED=0)
# on an empty base. goreleaser (dockers_v2 in .goreleaser.yaml) copies the
# release binary into the build context as $TARGETPLATFORM/svc-verify.
# Nothing is compiled here and nothing else is in the image.
#
#   docker run --rm -v "$PWD:/work:ro" IMAGE verify vpec.json --trust-root trust-bundle.pem
FROM scratch

ARG TARGETPLATFORM
ARG VERSION=dev
ARG REVISION=unknown
ARG CREATED=1970-01-01T00:00:00Z
ARG SOURCE=https://github.com/svc-gov/svc

LABEL org.opencontainers.image.title="svc-verify" \
      org.opencontainers.image.description="Offline verifier for governance proof credentials (VPECs) and model drift profiles" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.documentation="${SOURCE}/blob/main/docs/VERIFYING.md" \
      org.opencontainers.image.licenses="Apache-2.0"

COPY ${TARGETPLATFORM}/svc-verify /usr/local/bin/svc-verify

# Not root; reads the files it is given (mount them at /work, read-only)
# and writes nothing.
USER 65532:65532
WORKDIR /work
# A one-shot command, not a service: nothing to probe.
HEALTHCHECK NONE

ENTRYPOINT ["/usr/local/bin/svc-verify"]
CMD ["--help"]
