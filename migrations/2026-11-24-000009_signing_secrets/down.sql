DROP TABLE signing_secrets;
