package calibration

import (
	"bufio"
	"os"
	"runtime"
	"strings"

	"golang.org/x/sys/cpu"

	"github.com/svc-gov/svc/pkg/core/profile"
)

// KernelPath names the instruction set ONNX Runtime's MLAS kernels take
// on this CPU, as the CPU reports it (CPUID on x86-64, so an emulated CPU
// reports its own): avx512 (AVX-512F), avx2 (AVX2 and FMA), avx, sse4.2,
// sse2; neon on arm64; else the architecture.
func KernelPath() string {
	switch runtime.GOARCH {
	case "amd64":
		switch {
		case cpu.X86.HasAVX512F:
			return "avx512"
		case cpu.X86.HasAVX2 && cpu.X86.HasFMA:
			return "avx2"
		case cpu.X86.HasAVX:
			return "avx"
		case cpu.X86.HasSSE42:
			return "sse4.2"
		}
		return "sse2"
	case "arm64":
		return "neon"
	}
	return runtime.GOARCH
}

// ThisMachine describes the machine calibration runs on: the CPU model
// from /proc/cpuinfo (the host's, under an emulator: set SVC_CPU_NAME to
// name the emulated CPU) and KernelPath.
func ThisMachine() profile.Machine {
	name := os.Getenv("SVC_CPU_NAME")
	if name == "" {
		name = runtime.GOARCH
		if f, err := os.Open("/proc/cpuinfo"); err == nil {
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
					name = strings.TrimSpace(v)
					break
				}
			}
			f.Close()
		}
	}
	return profile.Machine{CPU: name, KernelPath: KernelPath()}
}
