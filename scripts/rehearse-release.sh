#!/usr/bin/env bash
# Rehearses scripts/release.sh in a throwaway clone of this repository's HEAD (committed work only),
# with --skip-tests, and checks what it left: the tag, the versions at the tag and after it, the
# changelog's section, the jar saying its version and the checksum beside it; then that a second
# run with the same version is refused and leaves the clone as it was. ./test.sh's release step.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A signal ends the script through exit, so that the EXIT trap runs then too.
trap 'exit 130' INT
trap 'exit 143' TERM
clone="$work/crossbar"
git clone -q . "$clone"
cd "$clone"
git config user.name "Release rehearsal"
git config user.email "rehearsal@localhost"

version=9.8.7
failures=0
check() { # check WHAT COMMAND...: the command succeeds
  local what="$1"
  shift
  if ! "$@" >/dev/null 2>&1; then
    echo "FAILED: $what"
    failures=$((failures + 1))
  fi
}

scripts/release.sh "$version" --skip-tests

check "tag v${version}" git rev-parse -q --verify "refs/tags/v${version}"
check "POM version at the tag" grep -q "<version>${version}</version>" <(git show "v${version}:crossbar-server/pom.xml")
check "changelog section at the tag" grep -qE "^## \[${version}\] - [0-9]{4}-[0-9]{2}-[0-9]{2}$" <(git show "v${version}:CHANGELOG.md")
check "a new Unreleased section" grep -q '^## \[Unreleased\]$' CHANGELOG.md
check "chart appVersion at the tag" grep -q "^appVersion: \"${version}\"$" <(git show "v${version}:deploy/helm/crossbar/Chart.yaml")
check "next snapshot after the tag" grep -q "<version>9.9.0-SNAPSHOT</version>" pom.xml
check "every module at the next snapshot" test "$(grep -l '9.9.0-SNAPSHOT' pom.xml */pom.xml | wc -l)" -eq 4
check "a clean work tree" test -z "$(git status --porcelain)"
check "the checksum" bash -c "cd target/release && sha256sum --quiet -c crossbar-${version}.jar.sha256"
check "--version of the released jar" test "$(java -jar "target/release/crossbar-${version}.jar" --version)" = "crossbar ${version}"

# The same version again: refused before anything changes.
head=$(git rev-parse HEAD)
if scripts/release.sh "$version" --skip-tests >/dev/null 2>&1; then
  echo "FAILED: a second release of ${version} was not refused"
  failures=$((failures + 1))
fi
check "the refused run changed nothing" test "$(git rev-parse HEAD)" = "$head"

if [ "$failures" -gt 0 ]; then
  echo "release rehearsal: ${failures} check(s) failed"
  exit 1
fi
echo "release rehearsal: ${version} tagged, built, checksummed and moved on to 9.9.0-SNAPSHOT"
