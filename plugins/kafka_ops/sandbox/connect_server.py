"""A local Spark Connect server for tests, benchmarks and demos: `local[2]` on a loopback port,
able to read Delta lakes, killed with the process that started it (`die_with_parent`)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import Self

from kafka_ops.child_process import die_with_parent
from kafka_ops.errors import KafkaOpsError
from kafka_ops.lake.spark_connect import remote_url, server_argv
from kafka_ops.sandbox.cluster import free_port
from kafka_ops.sandbox.jars import ensure_delta_spark_jars

START_TIMEOUT_S = 300.0
"""A JVM start with Delta's jars takes ~10 s on an idle machine; a loaded CI one is many times slower."""


class LocalConnectServer:
    """`with LocalConnectServer(log) as server:` a server on `server.url` until the block ends."""

    def __init__(self, log: Path, master: str = "local[2]") -> None:
        self.log = log
        self.master = master
        self.port = free_port()
        self.url = remote_url("127.0.0.1", self.port)
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> Self:
        spark_submit = os.path.join(os.path.dirname(os.path.abspath(sys.executable)), "spark-submit")
        argv = server_argv(self.master, self.port, ensure_delta_spark_jars(), spark_submit=spark_submit)
        env = {
            **os.environ,
            "SPARK_LOCAL_IP": "127.0.0.1",
            "PYSPARK_PYTHON": sys.executable,
            # spark-submit's find_spark_home runs the `python3` on PATH: this virtualenv's
            "PATH": os.path.dirname(os.path.abspath(sys.executable)) + os.pathsep + os.environ.get("PATH", ""),
        }
        with self.log.open("ab") as out:
            self._process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                preexec_fn=die_with_parent,  # noqa: PLW1509 - prctl only, no lock taken
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self._listening():
            if self._process.poll() is not None:
                raise KafkaOpsError(
                    f"the Spark Connect server exited {self._process.returncode} at start: see {self.log}"
                )
            if time.monotonic() > deadline:
                self.stop()
                raise KafkaOpsError(f"the Spark Connect server did not listen on {self.url} in {START_TIMEOUT_S:.0f} s")
            time.sleep(0.5)
        return self

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._process = None

    def _listening(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return True
        except OSError:
            return False

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()
