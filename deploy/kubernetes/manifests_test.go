package kubernetes

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/llmbench/llmbench/internal/config"
)

// The manifests, and the ${NAME}s filled in at apply time with envsubst.
const (
	shardsFile = "shards-indexed-job.yaml"
	mergeFile  = "merge-job.yaml"
	jobSetFile = "jobset.yaml"
)

var placeholders = []string{"IMAGE", "RUN", "START_AT"}

// testValues are what the tests fill the placeholders with; START_AT is
// near, as the README's one-liner makes it (llmbench refuses one more
// than a day away).
func testValues() map[string]string {
	return map[string]string{
		"IMAGE":    "registry.example.com/llmbench:test",
		"RUN":      "run1",
		"START_AT": time.Now().Add(90 * time.Second).UTC().Format(time.RFC3339),
	}
}

// envsubstRE finds what `envsubst '$A $B'` replaces: ${A} and $A.
var envsubstRE = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)`)

// substitute does what envsubst does with the placeholders listed, and
// fails on a ${NAME} that is not one of them: nobody would fill it.
func substitute(text string, values map[string]string) (string, error) {
	var unknown []string
	out := envsubstRE.ReplaceAllStringFunc(text, func(m string) string {
		sub := envsubstRE.FindStringSubmatch(m)
		name := sub[1] + sub[2]
		if v, ok := values[name]; ok {
			return v
		}
		if sub[1] != "" {
			unknown = append(unknown, m)
		}
		return m
	})
	if len(unknown) > 0 {
		return "", fmt.Errorf("placeholders %v are not among %v, which the README fills in", unknown, placeholders)
	}
	return out, nil
}

// kinds are the objects the manifests may hold, by apiVersion and kind.
// Anything else fails: it would be an object these tests do not check.
var kinds = map[string]func() any{
	batchv1.SchemeGroupVersion.String() + " Job":                  func() any { return new(batchv1.Job) },
	corev1.SchemeGroupVersion.String() + " Service":               func() any { return new(corev1.Service) },
	corev1.SchemeGroupVersion.String() + " PersistentVolumeClaim": func() any { return new(corev1.PersistentVolumeClaim) },
	jobset.GroupVersion.String() + " JobSet":                      func() any { return new(jobset.JobSet) },
}

// decode reads every YAML document of a manifest into its API type as
// the API server's strict field validation does: case-sensitive, no
// unknown and no duplicate fields. Documents holding only comments are
// skipped.
func decode(data []byte) ([]any, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []any
	for i := 1; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		js, err := yaml.YAMLToJSONStrict(doc)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if string(bytes.TrimSpace(js)) == "null" {
			continue
		}
		var tm metav1.TypeMeta
		if err := kjson.UnmarshalCaseSensitivePreserveInts(js, &tm); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		newObj, ok := kinds[tm.APIVersion+" "+tm.Kind]
		if !ok {
			return nil, fmt.Errorf("document %d: apiVersion %q kind %q is not one these tests know", i, tm.APIVersion, tm.Kind)
		}
		obj := newObj()
		strict, err := kjson.UnmarshalStrict(js, obj)
		if err != nil {
			return nil, fmt.Errorf("document %d (%s): %w", i, tm.Kind, err)
		}
		if len(strict) > 0 {
			return nil, fmt.Errorf("document %d (%s): %w", i, tm.Kind, errors.Join(strict...))
		}
		objs = append(objs, obj)
	}
}

// objects is one manifest file's decoded contents.
type objects struct {
	claims   []*corev1.PersistentVolumeClaim
	services []*corev1.Service
	jobs     []*batchv1.Job
	jobSets  []*jobset.JobSet
}

func load(t *testing.T, file string, values map[string]string) objects {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	text, err := substitute(string(raw), values)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	objs, err := decode([]byte(text))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var o objects
	for _, obj := range objs {
		switch v := obj.(type) {
		case *corev1.PersistentVolumeClaim:
			o.claims = append(o.claims, v)
		case *corev1.Service:
			o.services = append(o.services, v)
		case *batchv1.Job:
			o.jobs = append(o.jobs, v)
		case *jobset.JobSet:
			o.jobSets = append(o.jobSets, v)
		}
	}
	return o
}

func TestManifestsDecodeStrictly(t *testing.T) {
	files, err := filepath.Glob("*.y*ml")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{shardsFile, mergeFile, jobSetFile} {
		if !slices.Contains(files, want) {
			t.Errorf("%s is missing (have %v)", want, files)
		}
	}
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			text, err := substitute(string(raw), testValues())
			if err != nil {
				t.Fatal(err)
			}
			objs, err := decode([]byte(text))
			if err != nil {
				t.Fatal(err)
			}
			if len(objs) == 0 {
				t.Fatal("no objects")
			}
			// A placeholder left unfilled would reach the API server.
			if strings.Contains(text, "${") {
				t.Errorf("a ${...} is left after filling in %v", placeholders)
			}
		})
	}
}

// TestDecodeRejects proves the decoding is strict: each change turns a
// manifest the API server would refuse (or silently trim) into a failure.
func TestDecodeRejects(t *testing.T) {
	tests := []struct {
		name, file, old, new, want string
	}{
		{"misspelled field", shardsFile, "completionMode: Indexed", "completionMod: Indexed", "completionMod"},
		{"field in the wrong case", shardsFile, "completionMode: Indexed", "CompletionMode: Indexed", "CompletionMode"},
		{"misspelled deep field", mergeFile, "claimName: llmbench-results", "claimNam: llmbench-results", "claimNam"},
		{"duplicate field", shardsFile, "  completions: 4\n", "  completions: 4\n  completions: 5\n", "completions"},
		{"unknown kind", shardsFile, "kind: Service", "kind: Servise", "Servise"},
		{"unknown JobSet field", jobSetFile, "dependsOn:", "dependOn:", "dependOn"},
		{"wrong type", shardsFile, "parallelism: 4", "parallelism: four", "parallelism"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := os.ReadFile(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			text, err := substitute(string(raw), testValues())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := decode([]byte(text)); err != nil {
				t.Fatalf("the manifest itself fails: %v", err)
			}
			if !strings.Contains(text, tt.old) {
				t.Fatalf("%s has no %q to change", tt.file, tt.old)
			}
			_, err = decode([]byte(strings.Replace(text, tt.old, tt.new, 1)))
			if err == nil {
				t.Fatalf("decoded with %q in place of %q", tt.new, tt.old)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not name %q", err, tt.want)
			}
		})
	}
}

// k8sVarRE is a $(VAR) reference, which the kubelet expands in args from
// the container's env.
var k8sVarRE = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// envValue is the value of a container's env var, as the test sees it:
// a literal, or a stand-in for a Secret's.
func envValue(c corev1.Container, name string) (string, bool) {
	for _, e := range c.Env {
		if e.Name != name {
			continue
		}
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			return "secret:" + e.ValueFrom.SecretKeyRef.Name, true
		}
		return e.Value, true
	}
	return "", false
}

// expand is the kubelet's $(VAR) expansion: a reference to an unset
// variable stays as written.
func expand(args []string, env func(string) (string, bool)) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = k8sVarRE.ReplaceAllStringFunc(a, func(m string) string {
			if v, ok := env(m[2 : len(m)-1]); ok {
				return v
			}
			return m
		})
	}
	return out
}

// flagValue is the value of --name in args (--name=v or --name v).
func flagValue(args []string, name string) (string, bool) {
	for i, a := range args {
		switch {
		case a == "--"+name && i+1 < len(args):
			return args[i+1], true
		case strings.HasPrefix(a, "--"+name+"="):
			return strings.TrimPrefix(a, "--"+name+"="), true
		}
	}
	return "", false
}

// container is the pod's one container.
func container(t *testing.T, pod *corev1.PodSpec) corev1.Container {
	t.Helper()
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	return pod.Containers[0]
}

// claimMount is the claim the container mounts and where.
func claimMount(t *testing.T, pod *corev1.PodSpec) (claim, mountPath string) {
	t.Helper()
	c := container(t, pod)
	for _, v := range pod.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		for _, m := range c.VolumeMounts {
			if m.Name == v.Name {
				if claim != "" {
					t.Fatalf("mounts two claims, %s and %s", claim, v.PersistentVolumeClaim.ClaimName)
				}
				claim, mountPath = v.PersistentVolumeClaim.ClaimName, m.MountPath
			}
		}
	}
	if claim == "" {
		t.Fatal("mounts no PersistentVolumeClaim")
	}
	return claim, mountPath
}

// under reports whether p is dir or inside it.
func under(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// shard is what checkShards found in a shards Job.
type shard struct {
	count    int
	args     []string
	env      []corev1.EnvVar
	image    string
	claim    string
	mount    string
	runDir   string
	podLabel map[string]string
}

// checkShards checks a shards Job spec: Indexed, completions ==
// parallelism == LLMBENCH_SHARD_COUNT, no retries, and a command line
// that llmbench's own flag parser reads into the shard of each index.
func checkShards(t *testing.T, spec *batchv1.JobSpec, startAt string) shard {
	t.Helper()
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion {
		t.Fatalf("completionMode %v, want Indexed: the shard index is JOB_COMPLETION_INDEX", spec.CompletionMode)
	}
	if spec.Completions == nil || spec.Parallelism == nil {
		t.Fatal("completions and parallelism must both be set")
	}
	n := int(*spec.Completions)
	if int(*spec.Parallelism) != n {
		t.Errorf("parallelism %d != completions %d: the shards must run at once", *spec.Parallelism, n)
	}
	if spec.BackoffLimitPerIndex == nil || *spec.BackoffLimitPerIndex != 0 {
		t.Errorf("backoffLimitPerIndex is not 0: a retried shard sends its part again, late")
	}
	pod := &spec.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy %q, want Never", pod.RestartPolicy)
	}
	c := container(t, pod)
	countText, ok := envValue(c, config.EnvShardCount)
	if !ok {
		t.Fatalf("no %s env var", config.EnvShardCount)
	}
	if count, err := strconv.Atoi(countText); err != nil || count != n {
		t.Errorf("%s=%q, want completions (%d)", config.EnvShardCount, countText, n)
	}
	if len(c.Args) == 0 || c.Args[0] != "profile" {
		t.Fatalf("args %q do not start with profile", c.Args)
	}
	for _, f := range []string{"random-seed", "start-at", "shard-count", "artifact-dir"} {
		if _, ok := flagValue(c.Args, f); !ok {
			t.Errorf("args have no --%s", f)
		}
	}
	if v, _ := flagValue(c.Args, "start-at"); v != "$(LLMBENCH_START_AT)" {
		t.Errorf("--start-at %q, want $(LLMBENCH_START_AT)", v)
	}
	if v, _ := envValue(c, "LLMBENCH_START_AT"); v != startAt {
		t.Errorf("LLMBENCH_START_AT=%q, want the filled-in START_AT %q", v, startAt)
	}
	// Every $(VAR) must be in env, or the kubelet passes it as written.
	for _, a := range c.Args {
		for _, m := range k8sVarRE.FindAllStringSubmatch(a, -1) {
			if _, ok := envValue(c, m[1]); !ok {
				t.Errorf("arg %q refers to %s, which env does not set", a, m[1])
			}
		}
	}
	checkNoInlineSecrets(t, c)
	claim, mount := claimMount(t, pod)

	s := shard{count: n, args: c.Args, env: c.Env, image: c.Image, claim: claim, mount: mount, podLabel: spec.Template.Labels}
	for _, index := range []int{0, n - 1} {
		p := parseProfile(t, c, index)
		if p.Shard.Count != n || p.Shard.Index != index {
			t.Errorf("index %d: llmbench reads shard %d of %d, want %d of %d", index, p.Shard.Index, p.Shard.Count, index, n)
		}
		want, err := time.Parse(time.RFC3339, startAt)
		if err != nil {
			t.Fatal(err)
		}
		if !p.Shard.StartAt.Equal(want) {
			t.Errorf("index %d: llmbench starts at %v, want %v", index, p.Shard.StartAt, want)
		}
		if got, w := p.Output.ArtifactDir, config.ShardDir(p.Shard.RunDir, index); got != w {
			t.Errorf("index %d: writes into %s, want %s", index, got, w)
		}
		if !under(p.Shard.RunDir, mount) {
			t.Errorf("index %d: the run's folder %s is not on the volume mounted at %s", index, p.Shard.RunDir, mount)
		}
		s.runDir = p.Shard.RunDir
	}
	return s
}

// parseProfile reads the container's command line as `llmbench profile`
// does, in the pod of the given completion index.
func parseProfile(t *testing.T, c corev1.Container, index int) config.Profile {
	t.Helper()
	env := func(name string) (string, bool) {
		if name == "JOB_COMPLETION_INDEX" {
			return strconv.Itoa(index), true
		}
		return envValue(c, name)
	}
	args := expand(c.Args, env)
	fs := flag.NewFlagSet("llmbench profile", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	p := config.Default()
	config.BindFlags(fs, &p)
	if err := fs.Parse(config.ExpandListArgs(args[1:], config.ListFlags)); err != nil {
		t.Fatalf("llmbench profile %q: %v", args[1:], err)
	}
	if fs.NArg() > 0 {
		t.Fatalf("llmbench profile: unexpected argument %q", fs.Arg(0))
	}
	if err := p.ApplyEnv(env); err != nil {
		t.Fatalf("llmbench profile, environment: %v", err)
	}
	if err := p.Finish(); err != nil {
		t.Fatalf("llmbench profile %q: %v", args[1:], err)
	}
	return p
}

// checkNoInlineSecrets fails on a credential written into the manifest:
// it must come from a Secret.
func checkNoInlineSecrets(t *testing.T, c corev1.Container) {
	t.Helper()
	for _, e := range c.Env {
		up := strings.ToUpper(e.Name)
		secretish := strings.Contains(up, "KEY") || strings.Contains(up, "TOKEN") || strings.Contains(up, "PASSWORD") || strings.Contains(up, "SECRET")
		if secretish && (e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil) {
			t.Errorf("env %s is not from a Secret", e.Name)
		}
	}
	if v, ok := flagValue(c.Args, "api-key"); ok {
		m := k8sVarRE.FindStringSubmatch(v)
		if m == nil || m[0] != v {
			t.Errorf("--api-key %q is written inline; pass $(VAR) of a Secret", v)
		} else if e, _ := envValue(c, m[1]); !strings.HasPrefix(e, "secret:") {
			t.Errorf("--api-key's %s is not from a Secret", m[1])
		}
	}
}

// merge is what checkMerge found in a merge Job.
type merge struct {
	image, claim, mount, input, output string
}

// checkMerge checks a merge Job: `merge --output DIR RUNDIR` on a claim.
func checkMerge(t *testing.T, spec *batchv1.JobSpec) merge {
	t.Helper()
	pod := &spec.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever && pod.RestartPolicy != corev1.RestartPolicyOnFailure {
		t.Errorf("restartPolicy %q", pod.RestartPolicy)
	}
	if spec.Completions != nil && *spec.Completions != 1 {
		t.Errorf("completions %d: one merge is enough", *spec.Completions)
	}
	c := container(t, pod)
	if len(c.Args) == 0 || c.Args[0] != "merge" {
		t.Fatalf("args %q do not start with merge", c.Args)
	}
	m := merge{image: c.Image}
	m.claim, m.mount = claimMount(t, pod)
	var inputs []string
	for i := 1; i < len(c.Args); i++ {
		a := c.Args[i]
		switch {
		case a == "--output" && i+1 < len(c.Args):
			m.output = c.Args[i+1]
			i++
		case strings.HasPrefix(a, "--output="):
			m.output = strings.TrimPrefix(a, "--output=")
		case a == "--allow-partial":
		case strings.HasPrefix(a, "-"):
			t.Errorf("merge flag %q is not --output or --allow-partial", a)
		default:
			if m.output == "" {
				// The positional comes after --output: a parser that
				// stops at the first positional still sees it.
				t.Errorf("folder %q comes before --output", a)
			}
			inputs = append(inputs, a)
		}
	}
	if m.output == "" {
		t.Errorf("merge args %q have no --output", c.Args)
	}
	if len(inputs) != 1 {
		t.Fatalf("merge args %q: want one folder, the run's", c.Args)
	}
	m.input = inputs[0]
	if !under(m.output, m.mount) || !under(m.input, m.mount) {
		t.Errorf("merge reads %s and writes %s, not both on the volume at %s", m.input, m.output, m.mount)
	}
	return m
}

// checkMergeReadsShards checks the merge reads the shards' run folder
// from the same claim, and writes where it can be found.
func checkMergeReadsShards(t *testing.T, s shard, m merge) {
	t.Helper()
	if m.claim != s.claim || m.mount != s.mount {
		t.Errorf("merge mounts claim %s at %s, shards claim %s at %s", m.claim, m.mount, s.claim, s.mount)
	}
	if path.Clean(m.input) != path.Clean(s.runDir) {
		t.Errorf("merge reads %s, the shards write into %s", m.input, s.runDir)
	}
	if m.image != s.image {
		t.Errorf("merge image %s, shards image %s", m.image, s.image)
	}
}

func checkRWX(t *testing.T, claims []*corev1.PersistentVolumeClaim, name string) {
	t.Helper()
	for _, c := range claims {
		if c.Name != name {
			continue
		}
		if !slices.Contains(c.Spec.AccessModes, corev1.ReadWriteMany) {
			t.Errorf("claim %s access modes %v: the shards on several nodes need ReadWriteMany", name, c.Spec.AccessModes)
		}
		return
	}
	t.Errorf("no PersistentVolumeClaim %s", name)
}

func TestShardsJob(t *testing.T) {
	values := testValues()
	o := load(t, shardsFile, values)
	if len(o.jobs) != 1 || len(o.services) != 1 || len(o.claims) != 1 {
		t.Fatalf("%d Jobs, %d Services, %d claims; want one of each", len(o.jobs), len(o.services), len(o.claims))
	}
	job, svc := o.jobs[0], o.services[0]
	s := checkShards(t, &job.Spec, values["START_AT"])
	if s.count != 4 {
		t.Errorf("%d shards; the example has 4", s.count)
	}
	if s.runDir != "/results/run1" {
		t.Errorf("run folder %s, want /results/${RUN}", s.runDir)
	}
	checkRWX(t, o.claims, s.claim)

	if svc.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("Service clusterIP %q, want None (headless)", svc.Spec.ClusterIP)
	}
	if len(svc.Spec.Selector) == 0 {
		t.Fatal("Service selects nothing")
	}
	for k, v := range svc.Spec.Selector {
		if s.podLabel[k] != v {
			t.Errorf("Service selects %s=%s, the shard pods have %s=%q", k, v, k, s.podLabel[k])
		}
	}
	if job.Spec.Template.Spec.Subdomain != svc.Name {
		t.Errorf("pod subdomain %q, want the headless Service %q", job.Spec.Template.Spec.Subdomain, svc.Name)
	}
}

func TestMergeJob(t *testing.T) {
	values := testValues()
	shards := load(t, shardsFile, values)
	o := load(t, mergeFile, values)
	if len(o.jobs) != 1 || len(o.services)+len(o.claims)+len(o.jobSets) != 0 {
		t.Fatalf("want exactly one Job in %s", mergeFile)
	}
	m := checkMerge(t, &o.jobs[0].Spec)
	s := checkShards(t, &shards.jobs[0].Spec, values["START_AT"])
	checkMergeReadsShards(t, s, m)
	if m.output != "/results/run1/merged" {
		t.Errorf("merge writes %s, want /results/${RUN}/merged", m.output)
	}
	// The headless Service is for the shards only.
	mergeLabels := o.jobs[0].Spec.Template.Labels
	selected := true
	for k, v := range shards.services[0].Spec.Selector {
		selected = selected && mergeLabels[k] == v
	}
	if selected {
		t.Error("the shards' headless Service also selects the merge pod")
	}
	if o.jobs[0].Name == shards.jobs[0].Name {
		t.Errorf("merge and shards Jobs share the name %s", o.jobs[0].Name)
	}
}

func TestJobSet(t *testing.T) {
	values := testValues()
	o := load(t, jobSetFile, values)
	if len(o.jobSets) != 1 {
		t.Fatalf("%d JobSets, want 1", len(o.jobSets))
	}
	js := o.jobSets[0]
	byName := map[string]*jobset.ReplicatedJob{}
	for i := range js.Spec.ReplicatedJobs {
		rj := &js.Spec.ReplicatedJobs[i]
		byName[rj.Name] = rj
	}
	shards, merges := byName["shards"], byName["merge"]
	if shards == nil || merges == nil {
		t.Fatalf("replicated jobs %v, want shards and merge", slices.Sorted(maps.Keys(byName)))
	}
	if js.Spec.ReplicatedJobs[0].Name != "shards" || len(shards.DependsOn) != 0 {
		t.Error("shards must come first and depend on nothing (the first replicated job cannot use dependsOn)")
	}
	// One Job, or each Job's pods would repeat indexes 0..N-1.
	if shards.Replicas != 1 {
		t.Errorf("shards replicas %d, want 1: the shards are one Indexed Job's pods", shards.Replicas)
	}
	want := []jobset.DependsOn{{Name: "shards", Status: jobset.DependencyComplete}}
	if !reflect.DeepEqual(merges.DependsOn, want) {
		t.Errorf("merge dependsOn %+v, want %+v", merges.DependsOn, want)
	}
	if js.Spec.StartupPolicy != nil {
		t.Error("startupPolicy and dependsOn are mutually exclusive")
	}
	if fp := js.Spec.FailurePolicy; fp != nil && fp.MaxRestarts != 0 {
		t.Errorf("maxRestarts %d: a restart sends every shard's part again, late", fp.MaxRestarts)
	}
	s := checkShards(t, &shards.Template.Spec, values["START_AT"])
	m := checkMerge(t, &merges.Template.Spec)
	checkMergeReadsShards(t, s, m)
	checkRWX(t, o.claims, s.claim)

	// The same run as the Indexed Job's: one command line to maintain.
	job := load(t, shardsFile, values).jobs[0]
	jc := job.Spec.Template.Spec.Containers[0]
	if !reflect.DeepEqual(s.args, jc.Args) || !reflect.DeepEqual(s.env, jc.Env) {
		t.Errorf("the JobSet's shards differ from %s's:\n%q\n%q", shardsFile, s.args, jc.Args)
	}
	if *shards.Template.Spec.Completions != *job.Spec.Completions {
		t.Errorf("JobSet has %d shards, %s %d", *shards.Template.Spec.Completions, shardsFile, *job.Spec.Completions)
	}
}

func TestSubstitute(t *testing.T) {
	values := map[string]string{"IMAGE": "img", "RUN": "r"}
	tests := []struct {
		in, want string
		fails    bool
	}{
		{in: "image: ${IMAGE}", want: "image: img"},
		{in: "dir=/results/$RUN/x", want: "dir=/results/r/x"},
		{in: "$(LLMBENCH_START_AT) $HOME", want: "$(LLMBENCH_START_AT) $HOME"},
		{in: "image: ${IMAGES}", fails: true},
	}
	for _, tt := range tests {
		got, err := substitute(tt.in, values)
		if (err != nil) != tt.fails || !tt.fails && got != tt.want {
			t.Errorf("substitute(%q) = %q, %v; want %q, fails %v", tt.in, got, err, tt.want, tt.fails)
		}
	}
}

func TestExpand(t *testing.T) {
	env := func(n string) (string, bool) {
		v, ok := map[string]string{"A": "1", "E": ""}[n]
		return v, ok
	}
	got := expand([]string{"--a=$(A)", "$(E)", "$(MISSING)", "x$(A)$(A)"}, env)
	want := []string{"--a=1", "", "$(MISSING)", "x11"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("expand = %q, want %q", got, want)
	}
}
