#!/usr/bin/env bash
# Makes a release of Crossbar in this clone (docs/release.md): sets VERSION in every POM and in the
# Helm chart, turns CHANGELOG.md's "Unreleased" section into VERSION's, builds and tests the jar
# (./mvnw clean verify), checks that it says VERSION, commits and tags vVERSION, writes
# target/release/crossbar-VERSION.jar and its SHA-256 beside it, then moves the POMs to the next
# snapshot. It pushes nothing: it prints what to push and publish (the next ./mvnw clean empties
# target/release: publish first).
#
#   scripts/release.sh VERSION [--next NEXT-SNAPSHOT] [--skip-tests]
#
# VERSION: X.Y.Z. --next: default X.(Y+1).0-SNAPSHOT. --skip-tests: ./mvnw package instead of
# verify (a rehearsal; a real release runs every Java test). On any failure it puts the clone back
# as it found it: the commits and the tag go; target/release keeps nothing of this run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

usage() { sed -n '9,13p' "$0" >&2; exit 2; }
version="${1:-}"
[ -n "$version" ] || usage
shift
next=""
goal=(verify)
while [ $# -gt 0 ]; do
  case "$1" in
    --next) next="${2:?--next needs a version}"; shift ;;
    --skip-tests) goal=(package -DskipTests) ;;
    *) usage ;;
  esac
  shift
done
if ! [[ "$version" =~ ^([0-9]+)\.([0-9]+)\.([0-9]+)$ ]]; then
  echo "version: '$version' (expected: X.Y.Z, e.g. 0.1.0)" >&2
  exit 2
fi
next="${next:-${BASH_REMATCH[1]}.$((BASH_REMATCH[2] + 1)).0-SNAPSHOT}"
if ! [[ "$next" =~ ^[0-9]+\.[0-9]+\.[0-9]+-SNAPSHOT$ ]]; then
  echo "--next: '$next' (expected: X.Y.Z-SNAPSHOT)" >&2
  exit 2
fi
tag="v${version}"

# --- What must hold before anything changes ----------------------------------------------------
if [ -n "$(git status --porcelain)" ]; then
  echo "The work tree has changes: commit or stash them first (git status)." >&2
  exit 1
fi
if git rev-parse -q --verify "refs/tags/${tag}" >/dev/null; then
  echo "Tag ${tag} exists already." >&2
  exit 1
fi
# The Unreleased section must say something: the release's notes are what it holds.
unreleased=$(awk '/^## \[Unreleased\]/ { on = 1; next } /^## / { on = 0 } on && NF' CHANGELOG.md)
if [ -z "$unreleased" ]; then
  echo "CHANGELOG.md has nothing under '## [Unreleased]': write the release's notes there first." >&2
  exit 1
fi

say() { printf '==> %s\n' "$*"; }
MVN=(./mvnw -B -ntp -q)
start=$(git rev-parse HEAD)
done_ok=0
undo() {
  if [ "$done_ok" -eq 0 ]; then
    echo "release ${version} failed: putting the clone back at ${start:0:12}" >&2
    git reset -q --hard "$start"
    git tag -d "$tag" >/dev/null 2>&1 || true
    rm -f "target/release/crossbar-${version}.jar" "target/release/crossbar-${version}.jar.sha256"
  fi
}
trap undo EXIT
# A signal ends the script through exit, so that the EXIT trap runs then too.
trap 'exit 130' INT
trap 'exit 143' TERM

set_version() {
  "${MVN[@]}" versions:set -DnewVersion="$1" -DgenerateBackupPoms=false -DprocessAllModules=true
}

# --- The release commit --------------------------------------------------------------------------
say "version ${version} in the POMs, the Helm chart and CHANGELOG.md"
set_version "$version"
sed -i -E "s/^version: .*/version: ${version}/; s/^appVersion: .*/appVersion: \"${version}\"/" deploy/helm/crossbar/Chart.yaml
today=$(date -u +%Y-%m-%d)
sed -i "s/^## \[Unreleased\]\$/## [Unreleased]\n\n## [${version}] - ${today}/" CHANGELOG.md

say "build and test: ./mvnw clean ${goal[*]}"
"${MVN[@]}" clean "${goal[@]}"
jar=crossbar-server/target/crossbar.jar
said=$(java -jar "$jar" --version)
if [ "$said" != "crossbar ${version}" ]; then
  echo "The built jar says '${said}' (expected: crossbar ${version})." >&2
  exit 1
fi

git add -u
git commit -q -m "Release ${version}"
git tag -a "$tag" -m "Crossbar ${version}"

# --- The artefacts: the jar and its checksum, side by side ---------------------------------------
mkdir -p target/release
cp "$jar" "target/release/crossbar-${version}.jar"
(cd target/release && sha256sum "crossbar-${version}.jar" > "crossbar-${version}.jar.sha256" \
  && sha256sum --quiet -c "crossbar-${version}.jar.sha256")

# --- The next development version ----------------------------------------------------------------
say "next development version: ${next}"
set_version "$next"
git add -u
git commit -q -m "Start ${next}"

done_ok=1
say "released ${version}: tag ${tag} on $(git rev-parse --short "${tag}^{commit}")"
echo "  target/release/crossbar-${version}.jar"
echo "  target/release/crossbar-${version}.jar.sha256  ($(cut -d' ' -f1 "target/release/crossbar-${version}.jar.sha256"))"
echo "Publish: git push origin HEAD ${tag}; attach both files to the release; build and push the image"
echo "  docker build -f docker/Dockerfile -t <registry>/crossbar:${version} . (from the tag: git checkout ${tag})"
