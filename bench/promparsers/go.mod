module github.com/llmbench/llmbench/bench/promparsers

go 1.26.8

require (
	github.com/llmbench/llmbench v0.0.0
	github.com/prometheus/common v0.72.1
	github.com/prometheus/prometheus v0.316.0
)

require (
	github.com/VictoriaMetrics/VictoriaMetrics v1.110.0
	github.com/VictoriaMetrics/metrics v1.35.1 // indirect
	github.com/VictoriaMetrics/metricsql v0.82.0 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/gogo/protobuf v1.3.2 // indirect
	github.com/grafana/regexp v0.0.0-20250905093917-f7b3be9d1853 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/prometheus/client_model v0.6.3 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	github.com/valyala/fastjson v1.6.10 // indirect
	github.com/valyala/fastrand v1.1.0 // indirect
	github.com/valyala/histogram v1.2.0 // indirect
	github.com/valyala/quicktemplate v1.8.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

replace github.com/llmbench/llmbench => ../..
