DROP TABLE api_keys;
DROP TABLE servers;
DROP TABLE organizations;
DROP TABLE plans;
