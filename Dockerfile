# syntax=docker/dockerfile:1
# llmbench as one static binary on distroless: no shell, no libc, runs as
# nonroot (uid 65532). Build: docker build -t llmbench .
# Both platforms at once: docker buildx build --platform linux/amd64,linux/arm64 .

# The build runs on the builder's own platform and cross-compiles.
FROM --platform=$BUILDPLATFORM golang:1.26 AS build
ARG TARGETOS
ARG TARGETARCH
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags='-s -w' -o /llmbench ./cmd/llmbench

# static-debian12 holds CA certificates (for https:// servers and the
# Hugging Face Hub), /etc/passwd and tzdata, and nothing to run.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /llmbench /usr/local/bin/llmbench
# Numeric, so Kubernetes runAsNonRoot can check it.
USER 65532:65532
WORKDIR /home/nonroot
ENTRYPOINT ["/usr/local/bin/llmbench"]
CMD ["--help"]
