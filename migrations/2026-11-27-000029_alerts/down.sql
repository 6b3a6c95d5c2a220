DROP TABLE alert_rules_version;
DROP TABLE alert_deliveries;
DROP TABLE alert_firings;
DROP TABLE alert_groups;
DROP TABLE alert_minute_counts;
DROP TABLE alert_rule_destinations;
DROP TABLE alert_rules;
DROP TABLE alert_destinations;
