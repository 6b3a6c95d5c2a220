DROP TABLE recovery_codes;
DROP TABLE member_second_factors;
