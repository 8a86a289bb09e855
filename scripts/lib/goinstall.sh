# goinstall.sh: sourced by the install-*.sh scripts that build a pinned Go
# program from the module proxy into a cache directory.
#
# go_install_pinned NAME MODULE PACKAGE VERSION MODHASH DIR [--print-if-installed]
# prints the path of DIR/NAME, building it first unless the binary there
# was built from exactly MODULE at VERSION with the module hash MODHASH
# (`go version -m` says so; the go command checks the module against
# sum.golang.org). With --print-if-installed it only prints a binary that
# is already there (status 1, nothing printed, when there is none).
# The build runs outside the repository (svc's go.mod is untouched), with
# this Go (GOTOOLCHAIN=local), no go.work, and none of the caller's GOFLAGS
# (-mod=..., -buildvcs): a module-aware build of that module alone. A binary
# that is not the pinned one is refused, never installed.
go_install_pinned() {
	local name=$1 module=$2 pkg=$3 version=$4 modhash=$5 dir=$6 mode=${7:-}
	local bin=$dir/$name want
	want=$(printf 'mod\t%s\t%s\t%s' "$module" "$version" "$modhash")
	if [ -x "$bin" ] && go version -m "$bin" 2>/dev/null | grep -qF "$want"; then
		echo "$bin"
		return 0
	fi
	[ "$mode" = --print-if-installed ] && return 1
	command -v go >/dev/null || { echo "install-$name: the go command is needed (/usr/local/go/bin)" >&2; return 2; }
	mkdir -p "$dir"
	local tmp
	tmp=$(mktemp -d "$dir/.tmp-XXXXXX")
	# shellcheck disable=SC2064 # expand tmp now: it is local to this call
	trap "rm -rf '$tmp'" EXIT
	(
		cd "$tmp"
		GOFLAGS=-trimpath GOTOOLCHAIN=local GOWORK=off GOBIN="$tmp" go install "$pkg@$version" >&2
	)
	if ! go version -m "$tmp/$name" 2>/dev/null | grep -qF "$want"; then
		echo "install-$name: the built $name is not $module $version $modhash: refusing to install it" >&2
		go version -m "$tmp/$name" 2>/dev/null | grep -F "$module" >&2 || true
		return 1
	fi
	mv "$tmp/$name" "$bin"
	echo "$bin"
}
