-- Seed 002: the objects and initial data its examples are based on.
CREATE TABLE course
(
  university  VARCHAR2(30),
  subject     VARCHAR2(30),
  entry_year  NUMBER
);

ALTER TABLE course
ADD CONSTRAINT course_pk
PRIMARY KEY (university,subject,entry_year);

CREATE TABLE student
(
  student_key NUMBER,
  first_name  VARCHAR2(30),
  surname     VARCHAR2(30),
  gender      VARCHAR2(1),
  university  VARCHAR2(30),
  subject     VARCHAR2(30),
  entry_year  NUMBER,
  tuition_fee NUMBER
);

ALTER TABLE student
ADD CONSTRAINT student_pk
PRIMARY KEY (student_key);

ALTER TABLE student
ADD CONSTRAINT student_uk
UNIQUE (first_name,surname);

ALTER TABLE student
ADD CONSTRAINT student_course
FOREIGN KEY (university,subject,entry_year)
REFERENCES course (university,subject,entry_year);

INSERT INTO course VALUES ('Oxford','Theology',2013);
INSERT INTO course VALUES ('Oxford','Biology',2013);
INSERT INTO course VALUES ('Oxford','Biology',2014);
INSERT INTO course VALUES ('Cambridge','Economics',2013);
INSERT INTO course VALUES ('Cambridge','Physics',2013);
INSERT INTO course VALUES ('Cambridge','Chemistry',2013);
INSERT INTO course VALUES ('Manchester','Chemistry',2013);
INSERT INTO course VALUES ('Manchester','Computer Science',2013);
INSERT INTO course VALUES ('Manchester','Art History',2013);
INSERT INTO course VALUES ('Manchester','Media Studies',2013);

COMMIT;

INSERT INTO student VALUES (1001,'Lucy','Brotherton','F',
'Cambridge','Chemistry',2013,9000);

INSERT INTO student VALUES (1002,'Rebecca','Brown','F',
'Oxford','Biology',2013,9000);

INSERT INTO student VALUES (1003,'Simon','Campbell','M',
'Cambridge','Physics',2013,7500);

INSERT INTO student VALUES (1004,'Jason','Robinson','M',
'Oxford','Biology',2013,7500);

INSERT INTO student VALUES (1005,'Stuart','Overy','M',
'Manchester','Art History',2013,9000);

INSERT INTO student VALUES (1006,'Tom','Homer','M',
'Manchester','Computer Science',2013,9000);

INSERT INTO student VALUES (1007,'Victoria','Evans','F',
'Oxford','Theology',2013,9000);

INSERT INTO student VALUES (1008,'Katy','Pierce','F',
'Oxford','Theology',2013,9000);

INSERT INTO student VALUES (1009,'Shane','Thomas','M',
'Manchester','Media Studies',2013,9000);

INSERT INTO student VALUES (1010,'Sarah','McCloud','F',
'Oxford','Biology',2014,9000);

COMMIT;
