# kvindexer: the indexer (serve) and the slot tracker (slot-tracker) in one image.
#   docker build -t kvindexer .
#   docker run -p 8090:8090 kvindexer                      # serve with its defaults
#   docker run -p 8091:8091 kvindexer slot-tracker          # the slot tracker alone

FROM maven:3.9-eclipse-temurin-17 AS build
WORKDIR /src
# Dependencies first, so a source change does not download them again.
COPY pom.xml .
RUN mvn -B -q dependency:go-offline
COPY src src
COPY cluster.xml .
COPY conf conf
RUN mvn -B -q -DskipTests package

FROM eclipse-temurin:17-jre
# curl only for the HEALTHCHECK below. /var/lib/kvindexer is where --data-dir goes (docs/operations.md#data-directory):
# the user's own, so a named volume mounted there starts writable.
RUN apt-get update \
    && apt-get install -y --no-install-recommends curl \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /app --shell /usr/sbin/nologin kvindexer \
    && install -d -o 10001 -m 0700 /var/lib/kvindexer
WORKDIR /app
COPY --from=build /src/target/kvindexer.jar /app/kvindexer.jar
COPY --from=build /src/conf /app/conf
USER 10001
# 8090 indexer HTTP, 8091 slot tracker HTTP, 5701 Hazelcast (cluster mode).
EXPOSE 8090 8091 5701
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
    CMD curl -fsS http://127.0.0.1:8090/health || exit 1
# Exec form: java is PID 1 and receives SIGTERM itself, so the node leaves its cluster and closes its sockets.
# Huge pages take TLB misses out of the query tail (BENCHMARKS.md); harmless where the host turns THP off.
# An exhausted heap ends the process (exit status 3), so Kubernetes restarts it instead of keeping a zombie.
ENTRYPOINT ["java", "-XX:MaxRAMPercentage=75", "-XX:+ExitOnOutOfMemoryError", "-XX:+UseTransparentHugePages", "-jar", "/app/kvindexer.jar"]
CMD ["serve"]
