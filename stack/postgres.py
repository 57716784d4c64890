"""PostgreSQL 15 (Debian's) as Airflow's metadata database: its own cluster under `var/stack/postgres`.

PostgreSQL refuses to run as root, so initdb and the server run as the `postgres` user, on a data
directory it owns, with its socket directory under `var/stack` too (never /var/run/postgresql). The
server listens on one loopback TCP port with password (SCRAM) authentication; the superuser's
password and the `airflow` role's are generated once and kept in files only root and postgres read.
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
from pathlib import Path

from stack.processes import StackError, run

BIN = Path(os.environ.get("KAFKA_OPS_PG_BIN", "/usr/lib/postgresql/15/bin"))
OS_USER = "postgres"
DATABASE = ROLE = "airflow"


class Postgres:
    def __init__(self, home: Path, port: int) -> None:
        self.home, self.port = home, port
        self.data, self.sockets = home / "data", home / "run"

    def password(self, who: str) -> str:
        """The password of `who` (`postgres` or `airflow`), made on first use."""
        path = self.home / f"{who}.password"
        if not path.exists():
            path.write_text(secrets.token_urlsafe(18))
            path.chmod(0o600)
        return path.read_text().strip()

    def url(self, driver: str = "postgresql+psycopg2") -> str:
        return f"{driver}://{ROLE}:{self.password(ROLE)}@127.0.0.1:{self.port}/{DATABASE}"

    def init(self, env: dict[str, str]) -> None:
        """A new cluster the first time; later `up`s keep the data (Airflow's history survives a restart)."""
        if not (BIN / "postgres").exists():
            raise StackError(f"no PostgreSQL server in {BIN}: `make stack-servers` installs Debian's postgresql")
        account = pwd.getpwnam(OS_USER)
        self.home.mkdir(parents=True, exist_ok=True)
        for folder in (self.sockets, self.data):
            folder.mkdir(exist_ok=True)
            os.chown(folder, account.pw_uid, account.pw_gid)
        self.data.chmod(0o700)
        if (self.data / "PG_VERSION").exists():
            return
        pwfile = self.home / "postgres.pwfile"
        self.password("postgres")
        shutil.copyfile(self.home / "postgres.password", pwfile)
        os.chown(pwfile, account.pw_uid, account.pw_gid)
        try:
            run(
                [str(BIN / "initdb"), "-D", str(self.data), "-U", "postgres", f"--pwfile={pwfile}",
                 "--auth-local=scram-sha-256", "--auth-host=scram-sha-256", "--encoding=UTF8", "--locale=C.UTF-8"],
                env, self.home / "initdb.log", self.home, timeout_s=120, user=OS_USER,
            )  # fmt: skip
        finally:
            pwfile.unlink(missing_ok=True)

    def argv(self) -> list[str]:
        # small: Airflow's components and two workers hold a few dozen connections between them
        return [
            str(BIN / "postgres"), "-D", str(self.data), "-p", str(self.port), "-k", str(self.sockets),
            "-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200", "-c", "shared_buffers=64MB",
            "-c", "fsync=off", "-c", "logging_collector=off",
        ]  # fmt: skip

    def ready(self) -> bool:
        import psycopg2  # noqa: PLC0415 - only the stack needs the driver

        try:
            psycopg2.connect(
                host="127.0.0.1", port=self.port, user="postgres", password=self.password("postgres"),
                dbname="postgres", connect_timeout=3,
            ).close()  # fmt: skip
        except psycopg2.OperationalError:
            return False
        return True

    def create_airflow_database(self) -> None:
        """The `airflow` role and database, if missing (idempotent)."""
        import psycopg2  # noqa: PLC0415
        from psycopg2 import sql  # noqa: PLC0415

        conn = psycopg2.connect(
            host="127.0.0.1", port=self.port, user="postgres", password=self.password("postgres"), dbname="postgres"
        )
        conn.autocommit = True
        try:
            with conn.cursor() as cur:
                cur.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (ROLE,))
                if cur.fetchone() is None:
                    cur.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD %s").format(sql.Identifier(ROLE)),
                                (self.password(ROLE),))  # fmt: skip
                cur.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,))
                if cur.fetchone() is None:
                    cur.execute(
                        sql.SQL("CREATE DATABASE {} OWNER {}").format(sql.Identifier(DATABASE), sql.Identifier(ROLE))
                    )
        finally:
            conn.close()
