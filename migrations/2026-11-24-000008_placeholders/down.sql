DROP TABLE placeholders;
