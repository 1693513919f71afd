// What a Spark Connect server's driver pod takes from the driver image (deploy/docker/driver.Dockerfile): the
// server's class and jars. Apart from connect-server.ts, which artifacts.ts cannot import (connect-server.ts
// reads the manifest context, which is built from artifacts.ts).
export const CONNECT_SERVER_CLASS = 'org.apache.spark.sql.connect.service.SparkConnectServer';
/** Where the driver image holds the server's jar and the interceptor's. */
export const IMAGE_CONNECT_DIR = '/opt/spark-orchestrator/connect';
export const CONNECT_IMAGE_JARS = ['spark-connect_2.12-3.5.7.jar', 'connect-interceptor.jar'] as const;

/** local:// — in every node's image, not uploaded. */
export const imageConnectJars = (): string[] => CONNECT_IMAGE_JARS.map((j) => `local://${IMAGE_CONNECT_DIR}/${j}`);
