"""Autobahn|Testsuite's fuzzing client (wstest -m fuzzingclient), each case on its own N:N topic.

The relay sends a message to every other client on its topic, so each case needs an echo peer on
that topic before Autobahn connects, and must not share it with the next case: on one shared topic a
late echo from one case reaches the next case's connection. Before each case this asks the echo
peer (echo.mjs, over its stdin/stdout) to join <server url>/<case id>, waits until it has, and points
Autobahn at the same URL. Everything else is wstest's own fuzzing client and report.

usage: python fuzz.py spec.json node echo.mjs      (Python 2.7, with autobahntestsuite 0.8.2)
"""
import json
import select
import subprocess
import sys

from twisted.internet import reactor
from twisted.python import log

from autobahntestsuite import fuzzing

JOIN_TIMEOUT_SECONDS = 10


class PairedFuzzingClientFactory(fuzzing.FuzzingClientFactory):

    def __init__(self, spec, echo):
        self.echo = echo  # set first: the base constructor already starts the first case
        self.failed = False
        fuzzing.FuzzingClientFactory.__init__(self, spec)

    def nextCase(self):
        if not fuzzing.FuzzingClientFactory.nextCase(self):
            return False
        server = self.spec["servers"][self.currServer]
        url = "%s/%s" % (server["url"].rstrip("/"), self.currentCaseId)
        if not self.joinEcho(url):
            # Stop rather than run on unpaired: the report would then miss cases silently.
            self.failed = True
            reactor.callLater(0, lambda: reactor.running and reactor.stop())
            return False
        self.setSessionParameters(url=url, origin=self.origin, protocols=self.protocols,
                                  useragent=self.useragent)
        return True

    def joinEcho(self, url):
        self.echo.stdin.write("join %s\n" % url)
        self.echo.stdin.flush()
        ready, _, _ = select.select([self.echo.stdout], [], [], JOIN_TIMEOUT_SECONDS)
        line = self.echo.stdout.readline().strip() if ready else "timed out"
        if line != "joined %s" % url:
            print("echo peer did not join %s: %s" % (url, line))
            return False
        return True


def main():
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    echo = subprocess.Popen(sys.argv[2:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=1)
    try:
        log.startLogging(sys.stdout)
        factory = PairedFuzzingClientFactory(spec, echo)
        reactor.run()
    finally:
        echo.stdin.close()
        echo.wait()
    sys.exit(2 if factory.failed else 0)


if __name__ == "__main__":
    main()
